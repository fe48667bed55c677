"""``spade run CONFIG``: validate the config, then run self-play; ``--resume RUN_DIR`` continues a
run from its latest checkpoint (CONFIG may then be left out: the run's own resolved config is used).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from spade_core.config.load import ResolvedConfig
    from spade_core.plugins import LoadedPlugins

#: Keys that may differ between a run's stored config and the config it is resumed with.
RESUMABLE_CHANGES = ("run.dir", "run.iterations", "logging")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run self-play from a YAML config (or resume a run)")
    p.add_argument("config", nargs="?", default=None,
                   help="path of the YAML config (see configs/quickstart.yaml); optional with "
                        "--resume")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a key, e.g. --set run.iterations=3 (repeatable)")
    p.add_argument("--resume", metavar="RUN_DIR", default=None,
                   help="continue the run in RUN_DIR from its latest checkpoint; the config must "
                        "match the run's except run.iterations and logging")
    p.set_defaults(func=run)


def _flatten(data: object, prefix: str = "") -> dict[str, object]:
    if isinstance(data, dict):
        out: dict[str, object] = {}
        for key, value in data.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): data}


def config_differences(stored: dict, current: dict) -> list[str]:
    """Keys whose values differ between two resolved configs, apart from those a resume may
    change."""
    a, b = _flatten(stored), _flatten(current)
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return [k for k in changed
            if not any(k == p or k.startswith(p + ".") for p in RESUMABLE_CHANGES)]


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from spade_core.config.load import load_config
    from spade_core.errors import UsageError
    from spade_core.plugins import load_plugins

    if args.config is None and args.resume is None:
        raise UsageError("run: give a CONFIG file, or --resume RUN_DIR to continue a run")
    loaded = load_plugins()
    resume = Path(args.resume) if args.resume else None
    stored_path = resume / "config.resolved.yaml" if resume else None
    if resume is not None and not stored_path.is_file():
        raise UsageError(f"run --resume {args.resume}: no config.resolved.yaml there; give the "
                         "directory a `spade run` wrote")
    # Everything below is validated before any heavy component is imported or built.
    resolved = load_config(args.config or stored_path, loaded.registry, args.overrides)
    if resume is not None:
        check_resumable(resume, resolved, loaded)
    from spade_core.config.preflight import preflight

    preflight(resolved, loaded)  # model, corpus, extras, settings: before anything heavy starts
    from spade_core.selfplay.runner import run as run_selfplay

    from spade_core.distributed import launch_info

    run_dir = run_selfplay(resolved, loaded, resume=resume)
    if launch_info().main:
        _suggest_report(loaded, run_dir)
    return 0


def check_resumable(resume: "Path", resolved: "ResolvedConfig", loaded: "LoadedPlugins") -> None:
    """Refuse (ConfigError) to resume the run in ``resume`` with a config that differs from the
    one it stored in anything but :data:`RESUMABLE_CHANGES`."""
    from spade_core.config.load import resolve_config
    from spade_core.config.yaml_safe import load_yaml_text
    from spade_core.errors import ConfigError

    stored_path = resume / "config.resolved.yaml"
    if not stored_path.is_file():
        raise ConfigError(f"run --resume {resume}: no config.resolved.yaml there; give the "
                          "directory a `spade run` wrote")
    stored = load_yaml_text(stored_path.read_bytes(), str(stored_path))
    try:  # written by an older version: compare it under today's option names
        stored = resolve_config(stored, loaded.registry, str(stored_path)).to_dict()
    except ConfigError:
        pass  # compared as written; the differences name what changed
    differing = config_differences(stored, resolved.to_dict())
    if differing:
        raise ConfigError(
            f"run --resume {resume}: the config differs from the run's "
            f"({', '.join(differing[:8])}{' ...' if len(differing) > 8 else ''}); only "
            f"{', '.join(RESUMABLE_CHANGES)} may change on resume")


def _suggest_report(loaded: "LoadedPlugins", run_dir: "Path") -> None:
    """Point at ``spade report`` when a plugin provides it (it does unless SPADE_PLUGINS leaves
    the plugin out)."""
    import sys

    from spade_core.cli import load_commands

    if "report" in load_commands(loaded).commands:
        print(f"spade: see the run as one HTML page: spade report {run_dir}", file=sys.stderr)
