"""The Python API: what ``spade config check`` and ``spade run`` do, as functions.

Re-exported lazily by ``spade_core`` (``from spade_core import run, load_config``), so that
``import spade_core`` stays light; nothing heavy is imported before a run builds its components.
Documented in ``docs/api.md``.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spade_core.config.load import ResolvedConfig
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
        from spade_core.cli.run_cmd import check_resumable

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
    """Held-out evaluation as ``spade eval`` does, through the ``eval`` command an installed
    plugin registers; returns the command's JSON result (``suites``, each with ``overall`` and
    ``buckets``; ``settings``; ``model``). ``suites``: default ``eval.suites`` of the config.
    ``options``: ``{suite: {key: value}}``, as ``--option SUITE.KEY=VALUE``."""
    import argparse
    import contextlib
    import io
    import json
    import tempfile

    from spade_core.errors import PluginError

    loaded = plugins or load_plugins()
    from spade_core.cli import load_commands

    command = load_commands(loaded).commands.get("eval")
    if command is None:
        raise PluginError("evaluate() runs the 'eval' command, which no loaded plugin registers "
                          "(it comes with the built-in plugin 'evals'; is it left out by "
                          "SPADE_PLUGINS?)")
    with tempfile.TemporaryDirectory(prefix="spade-eval-") as tmp:
        if isinstance(config, (str, Path)):
            path = Path(config)
        else:
            import yaml

            path = Path(tmp) / "config.yaml"
            path.write_text(yaml.safe_dump(load_config(config, plugins=loaded).to_dict()))
        out = Path(tmp) / "result.json"
        argv = [str(path), "--out", str(out), "--samples", str(samples)]
        argv += [arg for name in suites or () for arg in ("--suite", name)]
        argv += [arg for key in overrides for arg in ("--set", key)]
        for suite, values in (options or {}).items():
            argv += [arg for key, value in values.items()
                     for arg in ("--option", f"{suite}.{key}={json.dumps(value)}")]
        for flag, value in (("--limit", limit), ("--checkpoint", checkpoint), ("--seed", seed),
                            ("--max-new-tokens", max_new_tokens)):
            if value is not None:
                argv += [flag, str(value)]
        parser = argparse.ArgumentParser(prog="spade eval")
        command.add_arguments(parser)
        args = parser.parse_args(argv)
        args._plugins = loaded
        with contextlib.redirect_stdout(io.StringIO()):  # the command's table
            command.run(args)
        return json.loads(out.read_text(encoding="utf-8"))


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


__all__ = ["check", "evaluate", "load_config", "load_plugins", "run"]
