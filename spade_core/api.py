"""The Python API: what ``spade config check`` and ``spade run`` do, as functions, and
:func:`open_env`, an environment program as a sandboxed ``gymnasium.Env``.

Re-exported lazily by ``spade_core`` (``from spade_core import run, load_config``), so that
``import spade_core`` stays light; nothing heavy is imported before a run builds its components.
Documented in ``docs/api.md``.

The core names no plugin module: :func:`open_env` builds the sandbox and the family through the
plugin registry and wraps the program in :class:`spade_core.gym_env.SandboxTextEnv`.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    import gymnasium

    from spade_core.config.load import ResolvedConfig
    from spade_core.interfaces.family import EnvFamily
    from spade_core.interfaces.sandbox import SandboxSession
    from spade_core.plugins import LoadedPlugins

def load_plugins() -> "LoadedPlugins":
    """Every installed plugin that ``SPADE_PLUGINS`` allows, with its components."""
    from spade_core.plugins import load_plugins as load

    return load()


def load_config(config: Any, overrides: Sequence[str] = (),
                plugins: "LoadedPlugins | None" = None) -> "ResolvedConfig":
    """Read (a YAML file's path) or take (a mapping, as the YAML holds it; or a config this
    function already resolved) a config, apply ``overrides`` (``"run.seed=3"``, as
    ``--set``), validate it and every selected plugin's options, and resolve the plugins.
    Raises :class:`spade_core.errors.ConfigError` naming every problem."""
    from spade_core.config.load import ResolvedConfig, apply_overrides, resolve_config
    from spade_core.config.load import load_config as load_file

    if isinstance(config, ResolvedConfig):
        if overrides:
            return load_config(config.to_dict(), overrides, plugins)
        return config
    registry = (plugins or load_plugins()).registry
    if isinstance(config, Mapping):
        data = copy.deepcopy(dict(config))
        apply_overrides(data, list(overrides), "<config>")
        return resolve_config(data, registry, "<config>")
    return load_file(config, registry, list(overrides))


def check(config: Any, plugins: "LoadedPlugins | None" = None) -> list[str]:
    """What stops ``config`` from running on this machine (the preflight of ``spade config
    check``): one message per problem, each starting with its config key; empty when none."""
    from spade_core.config.preflight import preflight_problems

    loaded = plugins or load_plugins()
    return preflight_problems(load_config(config, plugins=loaded), loaded)


def run(config: Any, *, overrides: Sequence[str] = (), resume: str | Path | None = None,
        plugins: "LoadedPlugins | None" = None, preflight: bool = True,
        report: Callable[[str], None] | None = None) -> Path:
    """Run self-play as ``spade run`` does and return the run directory. ``resume``: continue
    that run directory from its latest checkpoint (``config`` must then match its stored config
    except ``run.iterations``, ``run.dir`` and ``logging``). ``preflight=False`` skips the checks
    against this machine; ``report`` receives the progress lines (default: stderr)."""
    from spade_core.config.preflight import preflight as check_machine
    from spade_core.selfplay.runner import run as run_selfplay

    loaded = plugins or load_plugins()
    resolved = load_config(config, overrides, loaded)
    if resume is not None:
        from spade_core.config.resume import check_resumable

        check_resumable(Path(resume), resolved, loaded)
    if preflight:
        check_machine(resolved, loaded)
    return run_selfplay(resolved, loaded, report=report or _stderr,
                        resume=Path(resume) if resume is not None else None)


def evaluate(config: Any, suites: Sequence[str] | None = None, *, overrides: Sequence[str] = (),
             limit: int | None = None, samples: int = 1,
             options: Mapping[str, Mapping[str, Any]] | None = None,
             checkpoint: str | Path | None = None, seed: int | None = None,
             max_new_tokens: int | None = None,
             plugins: "LoadedPlugins | None" = None) -> dict[str, Any]:
    """Held-out evaluation as ``spade eval`` does; returns what ``spade eval --json`` prints
    (``suites``, each with ``overall`` and ``buckets``; ``settings``; ``model``). ``suites``:
    default ``eval.suites`` of the config. ``options``: ``{suite: {key: value}}``, as
    ``--option SUITE.KEY=VALUE``."""
    from spade_core.eval.run import run_eval

    loaded = plugins or load_plugins()
    resolved = load_config(config, overrides, loaded)
    label = str(config) if isinstance(config, (str, Path)) else "<config>"
    return run_eval(resolved, loaded.registry, config_label=label, suites=suites,
                    options=options, limit=limit, samples=samples, seed=seed,
                    max_new_tokens=max_new_tokens, checkpoint=checkpoint).payload


def open_env(program: str | Path, family: str | None = None, *, sandbox: str = "process",
             sandbox_options: Mapping[str, Any] | None = None, check: bool = True,
             plugins: "LoadedPlugins | None" = None, **env_options: Any) -> "gymnasium.Env":
    """An environment program as a ``gymnasium.Env`` whose code runs in this project's sandbox.

    ``program``: a file's path (a ``Path``, or a ``str`` without a line break) or the program's
    text. ``family``: the env family whose prelude and answer format it uses; by default chosen as
    ``spade check-env`` chooses it (the installed family whose injected names the program uses,
    none for a self-contained program in the plain SPADE game format). ``sandbox`` and
    ``sandbox_options``: the sandbox plugin and its options. ``check``: validate the program first,
    as ``spade check-env`` does, and raise :class:`~spade_core.errors.SandboxError` naming the
    verdict when it is no valid environment. ``env_options`` go to the env
    (``max_observation_chars``, ``max_action_chars``, ``render_mode``).

    Observations and actions are text; ``env.close()`` (or ``with open_env(...) as env``) stops
    the env's sandbox."""
    from spade_core.gym_env import SandboxTextEnv

    loaded = plugins or load_plugins()
    label, source = _read_program(program)
    chosen, unused = _choose_family(source, family, label, loaded)
    for other in unused:
        other.close()
    box: Any = None
    handed_over = False
    try:
        box = loaded.registry.build("sandbox", sandbox, dict(sandbox_options or {}),
                                    "open_env(sandbox=...)")
        if check:
            _check_program(box, source, chosen, label)
        opened = box

        def close() -> None:
            try:
                opened.close()
            finally:
                if chosen is not None:
                    chosen.close()

        env = SandboxTextEnv(lambda: opened.open(source, family=chosen), on_close=close,
                             **env_options)
        handed_over = True  # the env closes the sandbox and the family now
        return env
    finally:
        if not handed_over:
            try:
                if box is not None:
                    box.close()
            finally:
                if chosen is not None:
                    chosen.close()


def _read_program(program: str | Path) -> tuple[str, str]:
    """``(label for messages, source)`` of :func:`open_env`'s ``program``."""
    if isinstance(program, str) and "\n" in program:
        return "open_env(<program text>)", program
    path = Path(program)
    if not path.is_file():
        raise FileNotFoundError(f"open_env: {program}: no such file (pass a program's text with at "
                                "least one line break, or the path of a .py file)")
    try:
        return f"open_env({path})", path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"open_env: {path}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None


def _choose_family(source: str, family: str | None, label: str, loaded: "LoadedPlugins"
                   ) -> tuple["EnvFamily | None", list["EnvFamily"]]:
    """The program's family (``family`` by name, else chosen as ``spade check-env`` does) and the
    other families built on the way (to close)."""
    from spade_core.errors import ConfigError
    from spade_core.program_files import choose_family, families_needed, installed_families

    registry = loaded.registry
    if family is not None:
        return registry.build("env_family", family, {}, "open_env(family=...)"), []
    installed = list(installed_families(registry, "open_env").values())
    needed = families_needed(source, installed)
    if not needed:
        return None, installed
    chosen, problems = choose_family(source, needed)
    if chosen is None:
        used = " and ".join(f"family {f.name!r}" for f in needed)
        for built in installed:
            built.close()
        raise ConfigError(f"{label}: the program uses names injected by {used}, which does not "
                          "accept it (pass family=NAME to choose the family): "
                          + "; ".join(problems))
    return chosen, [f for f in installed if f is not chosen]


def _check_program(box: Any, source: str, family: "EnvFamily | None", label: str) -> None:
    """Validate ``source`` in ``box`` as ``spade check-env`` does; a
    :class:`~spade_core.errors.SandboxError` naming the verdict when it is invalid."""
    import dataclasses

    from spade_core.errors import SandboxError
    from spade_core.validation import validate

    [verdict] = validate(box, [source], family=family)
    if not verdict.valid:
        where = f" (line {verdict.line})" if verdict.line else ""
        name = (f"family {family.name!r}" if family is not None else
                "the plain SPADE game format (family=NAME picks a family's)")
        raise SandboxError(dataclasses.replace(verdict, message=(
            f"{label} is not a valid environment program in {name}{where}: {verdict.message}; "
            "check=False opens it anyway")))


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


__all__ = ["check", "evaluate", "load_config",
           "load_plugins", "open_env", "run"]
