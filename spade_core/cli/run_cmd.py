"""``spade run CONFIG``: validate the config, then run self-play; ``--resume RUN_DIR`` continues a
run from its latest checkpoint (CONFIG may then be left out: the run's own resolved config is used).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from spade_core.plugins import LoadedPlugins


def add_parser(sub: argparse._SubParsersAction) -> None:
    from spade_core.config.resume import RESUMABLE_CHANGES

    p = sub.add_parser("run", help="run self-play from a YAML config (or resume a run)",
                       description="Validate the config, check it against this machine, create "
                                   "the run directory and run self-play; or, with --resume, "
                                   "continue a run from its latest checkpoint.")
    p.add_argument("config", nargs="?", default=None,
                   help="path of the YAML config (see configs/quickstart.yaml); optional with "
                        "--resume")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a key, e.g. --set run.iterations=3 (repeatable)")
    p.add_argument("--resume", metavar="RUN_DIR", default=None,
                   help="continue the run in RUN_DIR from its latest checkpoint; the config must "
                        f"match the run's except {', '.join(RESUMABLE_CHANGES)}")
    p.add_argument("--smoke", action="store_true",
                   help="a quick check that the config runs end to end: one small iteration "
                        "(run.iterations 1, regeneration_interval 1, at most 2 environments, 2 "
                        "rollouts, 2 turns, memory status counts one iteration fills); prints the "
                        "overrides it applies; --set still wins")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from spade_core.api import run as run_api
    from spade_core.distributed import launch_info
    from spade_core.errors import UsageError
    from spade_core.plugins import load_plugins

    if args.config is None and args.resume is None:
        raise UsageError("run: give a CONFIG file, or --resume RUN_DIR to continue a run")
    loaded = getattr(args, "_plugins", None) or load_plugins()  # tests pass their own
    resume = Path(args.resume) if args.resume else None
    stored_path = resume / "config.resolved.yaml" if resume else None
    if resume is not None and not stored_path.is_file():
        raise UsageError(f"run --resume {args.resume}: no config.resolved.yaml there; give the "
                         "directory a `spade run` wrote")
    overrides = list(args.overrides)
    if getattr(args, "smoke", False):
        if resume is not None:
            raise UsageError("run: --smoke starts a new small run; it cannot be combined with "
                             "--resume")
        overrides = _smoke(args.config, overrides, loaded) + overrides
    # The API validates everything (config, resume, preflight) before anything heavy starts.
    run_dir = run_api(args.config or stored_path, overrides=overrides, resume=resume,
                      plugins=loaded)
    if launch_info().main:
        _suggest_report(loaded, run_dir)
    return 0


def _smoke(config: str, overrides: list[str], loaded: "LoadedPlugins") -> list[str]:
    """The ``--smoke`` overrides for ``config``, said on stderr."""
    import sys

    from spade_core.config.load import read_config_file
    from spade_core.config.smoke import smoke_overrides

    applied = smoke_overrides(read_config_file(config), overrides, loaded.registry, config)
    print("spade: --smoke: one small iteration to check the config runs end to end, not an "
          "experiment; overrides: " + ", ".join(applied), file=sys.stderr)
    return applied


def _suggest_report(loaded: "LoadedPlugins", run_dir: "Path") -> None:
    """Point at ``spade report`` when a plugin provides it (it does unless SPADE_PLUGINS leaves
    the plugin out)."""
    import sys

    from spade_core.cli import load_commands

    if "report" in load_commands(loaded).commands:
        print(f"spade: see the run as one HTML page: spade report {run_dir}", file=sys.stderr)
