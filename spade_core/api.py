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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal


if TYPE_CHECKING:
    import gymnasium

    from spade_core.config.load import ResolvedConfig
    from spade_core.interfaces.family import EnvFamily
    from spade_core.interfaces.sandbox import SandboxSession
    from spade_core.plugins import LoadedPlugins
    from spade_core.records import Verdict

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


def check(config: Any, plugins: "LoadedPlugins | None" = None, *,
          raise_problems: bool = False) -> list[str]:
    """What stops ``config`` from running on this machine (the preflight of ``spade config
    check``): one message per problem, each starting with its config key; empty when none.
    ``raise_problems``: raise one :class:`~spade_core.errors.ConfigError` listing them
    instead, as ``spade run`` does before it loads anything."""
    from spade_core.config.preflight import preflight, preflight_problems

    loaded = plugins or load_plugins()
    resolved = load_config(config, plugins=loaded)
    if raise_problems:
        preflight(resolved, loaded)
        return []
    return preflight_problems(resolved, loaded)


def run(config: Any, *, overrides: Sequence[str] = (), resume: str | Path | None = None,
        plugins: "LoadedPlugins | None" = None, preflight: bool = True,
        report: Callable[[str], None] | None = None) -> Path:
    """Run self-play as ``spade run`` does and return the run directory. ``resume``: continue
    that run directory from its latest checkpoint (``config`` must then match its stored config
    except ``run.iterations``, ``run.dir`` and ``logging``). ``preflight=False`` skips the checks
    against this machine; ``report`` receives the progress lines (default: stderr)."""
    from spade_core.config.preflight import preflight as check_machine
    from spade_core.selfplay.run_loop import run as run_selfplay

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


@dataclass(frozen=True)
class ProgramCheck:
    """One program's result from :func:`check_programs` (and :func:`import_programs`)."""

    #: The program's label (its file, or ``file:line`` in a JSONL file).
    label: str
    #: Its text; ``None`` when the file is not UTF-8 text.
    source: str | None
    #: The family it was checked in; ``None`` for the plain SPADE game format, or when no
    #: family accepts it (the verdict then says why).
    family: str | None
    verdict: "Verdict"


@dataclass(frozen=True)
class ProgramChecks:
    """What :func:`check_programs` found: the sandbox's isolation report and one
    :class:`ProgramCheck` per program, in the order given."""

    isolation: dict[str, Any]
    checks: list[ProgramCheck]


def check_programs(programs: Sequence[tuple[str, str | None]],
                   families: Sequence[str] | None = None, *,
                   choose: Literal["injected", "first"] = "injected", sandbox: str = "process",
                   sandbox_options: Mapping[str, Any] | None = None, run_dir: Path | None = None,
                   plugins: "LoadedPlugins | None" = None,
                   on_skip: Callable[[str, Exception], None] | None = None) -> ProgramChecks:
    """Validate environment programs (``(label, source)``; source ``None`` when the file is not
    UTF-8) in one sandbox, several at once, as training does.

    A program's family is the first of its candidates that makes it valid (the first candidate
    and its verdict when none does): with ``choose="injected"`` (``spade check-env``) one named
    family for every program, else :func:`~spade_core.program_files.family_candidates` (the
    families whose injected names it uses; for a self-contained program the plain SPADE game
    format, then every family that accepts it); with ``choose="first"`` (``spade envs import``)
    the ``families`` whose static checks accept it, in their order. ``families``: by name;
    default every installed family that can start (``on_skip(name, error)`` hears of the
    others)."""
    from spade_core.components import BuildContext
    from spade_core.program_files import choose_family, family_candidates, installed_families
    from spade_core.records import Verdict

    registry = (plugins or load_plugins()).registry
    context = BuildContext(run_dir=run_dir)
    if families:
        built = [registry.build("env_family", name, {}, "--family", context) for name in families]
    else:
        built = list(installed_families(registry, "--family", context, on_skip=on_skip).values())
    forced = built[0] if choose == "injected" and families else None
    try:
        candidates: dict[int, list[Any]] = {}
        refused: dict[int, Verdict] = {}
        for index, (_, source) in enumerate(programs):
            if source is None:
                refused[index] = Verdict(False, "syntax", "the file is not UTF-8 text")
            elif forced is not None:
                candidates[index] = [forced]
            elif choose == "injected":
                found, problem = family_candidates(source, built)
                if problem is None:
                    candidates[index] = found
                else:
                    refused[index] = Verdict(False, "interface", f"{problem} (give --family "
                                             "NAME to choose the family)")
            else:
                accepted = [f for f in built if not f.static_problems(source)]
                if accepted:
                    candidates[index] = accepted
                else:
                    _, problems = choose_family(source, built)
                    refused[index] = Verdict(False, "interface", "no family accepts it: "
                                             + "; ".join(problems))
        box = registry.build("sandbox", sandbox, dict(sandbox_options or {}), "--sandbox",
                             context)
        try:
            isolation = box.isolation()
            chosen, verdicts = _first_valid_family(
                box, {i: programs[i][1] for i in candidates}, candidates)
        finally:
            box.close()
        verdicts.update(refused)
    finally:
        for family in built:
            family.close()
    return ProgramChecks(isolation, [
        ProgramCheck(label, source, getattr(chosen.get(i), "name", None), verdicts[i])
        for i, (label, source) in enumerate(programs)])


def _first_valid_family(box: Any, sources: Mapping[int, str], candidates: Mapping[int, list[Any]]
                        ) -> tuple[dict[int, Any], dict[int, "Verdict"]]:
    """Each program's family and verdict: its candidates are tried in order (the programs of one
    family validated together) until one makes it valid; when none does, the first candidate
    and its verdict stand. Only a verdict another family could change
    (:data:`~spade_core.program_files.FAMILY_DEPENDENT`) sends a program on to the next."""
    from spade_core.program_files import FAMILY_DEPENDENT
    from spade_core.validation import validate

    chosen: dict[int, Any] = {}
    verdicts: dict[int, Verdict] = {}
    trying = {index: 0 for index in sources}  # program -> position of the candidate to try
    while trying:
        groups: dict[str | None, list[int]] = {}
        for index, position in trying.items():
            family = candidates[index][position]
            groups.setdefault(getattr(family, "name", None), []).append(index)
        next_round: dict[int, int] = {}
        for indices in groups.values():
            family = candidates[indices[0]][trying[indices[0]]]
            checked = validate(box, [sources[i] for i in indices], family=family)
            for index, verdict in zip(indices, checked):
                if verdict.valid or index not in verdicts:
                    chosen[index], verdicts[index] = family, verdict
                more = trying[index] + 1 < len(candidates[index])
                if not verdict.valid and verdict.category in FAMILY_DEPENDENT and more:
                    next_round[index] = trying[index] + 1
        trying = next_round
    return chosen, verdicts


def import_programs(programs: Sequence[tuple[str, str | None, str]], run_dir: str | Path,
                    families: Sequence[str] | None = None, *, memory: str = "faiss",
                    memory_options: Mapping[str, Any] | None = None, sandbox: str = "process",
                    sandbox_options: Mapping[str, Any] | None = None,
                    plugins: "LoadedPlugins | None" = None,
                    on_skip: Callable[[str, Exception], None] | None = None
                    ) -> list[ProgramCheck]:
    """Validate programs (``(label, source, description)``, as
    :func:`spade_core.program_files.read_programs` yields them) and add each to the memory of
    ``run_dir``, as ``spade envs import`` does: valid ones as ``frontier`` (playable), invalid
    ones as ``rejected`` with their verdict. Each program's family is the first of ``families``
    (default: every installed family) whose static checks accept it."""
    from spade_core.components import BuildContext
    from spade_core.records import EnvRecord, EnvStatus, program_id

    loaded = plugins or load_plugins()
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    found = check_programs([(label, source) for label, source, _ in programs], families,
                           choose="first", sandbox=sandbox, sandbox_options=sandbox_options,
                           run_dir=folder, plugins=loaded, on_skip=on_skip)
    store = loaded.registry.build("env_memory", memory, dict(memory_options or {}), "--memory",
                                  BuildContext(run_dir=folder))
    try:
        for check, (label, source, description) in zip(found.checks, programs):
            if source is None:
                continue
            verdict = check.verdict
            store.add(EnvRecord(
                id=program_id(source), source=source, family=check.family or "unknown",
                status=EnvStatus.FRONTIER if verdict.valid else EnvStatus.REJECTED,
                doc_id=f"import:{label}", description=description or label,
                verdict_category=verdict.category, verdict_message=verdict.message))
    finally:
        store.close()
    return found.checks


def model_problems(spec: str, backend: str = "transformers",
                   plugins: "LoadedPlugins | None" = None) -> list[str]:
    """What the generation backend ``backend``'s preflight finds wrong with model ``spec`` (as
    ``model.path`` takes it); ``[]`` when it can be found (``spade doctor``)."""
    from spade_core.config.load import ResolvedComponent, ResolvedConfig
    from spade_core.config.preflight import PreflightContext
    from spade_core.config.schema import ModelSection, SpadeConfig
    from spade_core.testing import default_options

    loaded = plugins or load_plugins()
    component = loaded.registry.resolve("generation_backend", backend, "--backend")
    if component.preflight is None:
        return []
    config = ResolvedConfig(source="doctor", config=SpadeConfig.model_construct(
        model=ModelSection(path=spec)))
    rc = ResolvedComponent(section="backend", component=component,
                           options=default_options(component))
    try:
        return [str(p) for p in component.preflight(
            rc.options, PreflightContext(where="backend.options", config=config)) or ()]
    except Exception as exc:  # noqa: BLE001 - a broken check is reported, never crashes doctor
        return [f"the preflight check of backend {backend!r} failed: {type(exc).__name__}: {exc}"]


def probe_sandbox(sandbox: str = "process", plugins: "LoadedPlugins | None" = None
                  ) -> tuple[dict[str, Any], "Verdict"]:
    """The sandbox's isolation report and the verdict on a small probe environment run in it
    (``spade doctor``)."""
    from spade_core.validation import PROBE_PROGRAM, validate

    box = (plugins or load_plugins()).registry.build("sandbox", sandbox, {}, "--sandbox")
    try:
        report = box.isolation()
        [verdict] = validate(box, [PROBE_PROGRAM])
    finally:
        box.close()
    return report, verdict


def open_env(program: str | Path, family: str | None = None, *, sandbox: str = "process",
             sandbox_options: Mapping[str, Any] | None = None, check: bool = True,
             plugins: "LoadedPlugins | None" = None, **env_options: Any) -> "gymnasium.Env":
    """An environment program as a ``gymnasium.Env`` whose code runs in this project's sandbox.

    ``program``: a file's path (a ``Path``, or a ``str`` without a line break) or the program's
    text. ``family``: the env family whose prelude and answer format it uses; by default chosen as
    ``spade check-env`` chooses it (the installed family whose injected names the program uses;
    for a self-contained program the plain SPADE game format, or else the first installed family
    in which it is valid; with ``check=False``, no validation: the first of these). ``sandbox`` and
    ``sandbox_options``: the sandbox plugin and its options. ``check``: validate the program first,
    as ``spade check-env`` does, and raise :class:`~spade_core.errors.SandboxError` naming the
    verdict when it is no valid environment. ``env_options`` go to the env
    (``max_observation_chars``, ``max_action_chars``, ``render_mode``).

    Observations and actions are text; ``env.close()`` (or ``with open_env(...) as env``) stops
    the env's sandbox."""
    from spade_core.gym_env import SandboxTextEnv

    loaded = plugins or load_plugins()
    label, source = _read_program(program)
    candidates, built = _family_candidates(source, family, label, loaded)
    chosen = candidates[0]
    box: Any = None
    handed_over = False
    try:
        box = loaded.registry.build("sandbox", sandbox, dict(sandbox_options or {}),
                                    "open_env(sandbox=...)")
        if check:
            chosen = _check_program(box, source, candidates, label)
        for other in built:
            if other is not chosen:
                other.close()
        built = [chosen] if chosen is not None else []
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
                for other in built:
                    other.close()


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


def _family_candidates(source: str, family: str | None, label: str, loaded: "LoadedPlugins"
                       ) -> tuple[list["EnvFamily | None"], list["EnvFamily"]]:
    """The families to try the program in, as ``spade check-env`` tries them (``family`` alone
    when named), and every family built on the way (to close)."""
    from spade_core.errors import ConfigError
    from spade_core.program_files import family_candidates, installed_families

    registry = loaded.registry
    if family is not None:
        named = registry.build("env_family", family, {}, "open_env(family=...)")
        return [named], [named]
    installed = list(installed_families(registry, "open_env").values())
    candidates, problem = family_candidates(source, installed)
    if problem is not None:
        for built in installed:
            built.close()
        raise ConfigError(f"{label}: {problem} (pass family=NAME to choose the family)")
    return candidates, installed


def _check_program(box: Any, source: str, candidates: list["EnvFamily | None"], label: str
                   ) -> "EnvFamily | None":
    """The first of ``candidates`` in which ``source`` is valid, validated as ``spade check-env``
    does; a :class:`~spade_core.errors.SandboxError` naming the first candidate's verdict when
    it is valid in none."""
    import dataclasses

    from spade_core.errors import SandboxError

    chosen, verdicts = _first_valid_family(box, {0: source}, {0: candidates})
    family, verdict = chosen[0], verdicts[0]
    if not verdict.valid:
        where = f" (line {verdict.line})" if verdict.line else ""
        name = (f"family {family.name!r}" if family is not None else
                "the plain SPADE game format (family=NAME picks a family's)")
        raise SandboxError(dataclasses.replace(verdict, message=(
            f"{label} is not a valid environment program in {name}{where}: {verdict.message}; "
            "check=False opens it anyway")))
    return family


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


__all__ = ["ProgramCheck", "ProgramChecks", "check", "check_programs", "evaluate",
           "import_programs", "load_config", "load_plugins", "model_problems", "open_env",
           "probe_sandbox", "run"]
