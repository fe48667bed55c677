"""The ``spade`` command line. Each command lives in its own module; this one only wires them.

Command modules must stay light at import time (``spade --help`` imports all of them): heavy
libraries are imported inside their ``run`` functions.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback

from spade_core import __version__
from spade_core.errors import SpadeError

#: Command modules, each with ``add_parser(subparsers)``; the parser's ``func`` runs the command.
COMMAND_MODULES: tuple[str, ...] = (
    "spade_core.cli.run_cmd",
    "spade_core.cli.config_cmd",
    "spade_core.cli.plugins_cmd",
    "spade_core.cli.check_env_cmd",
    "spade_core.cli.bench_cmd",
    "spade_core.cli.doctor_cmd",
    "spade_core.cli.memory_cmd",
    "spade_core.cli.envs_cmd",
    "spade_core.cli.seeds_cmd",
    "spade_core.cli.report_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spade",
        description="Self-play RL for LLM agents in environments the model writes itself.",
    )
    parser.add_argument("--version", action="version", version=f"spade-rl {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show a traceback for errors instead of a one-paragraph message")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SpadeError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"spade: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("spade: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug or a plugin's failure: say it, keep it short
        if args.debug:
            traceback.print_exc()
        print(f"spade: error: {type(exc).__name__}: {exc} (run again with --debug for the "
              "traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
