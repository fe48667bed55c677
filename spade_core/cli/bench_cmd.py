"""``spade bench <what>``: micro-benchmarks of one part of the system.

Each subcommand lives in its own module, listed in :data:`BENCHMARKS`; a module provides
``add_arguments(parser)`` and ``run(args) -> int``. Modules are imported only when their benchmark
runs, so ``spade --help`` stays light whatever they import. Other areas add their benchmark
(``memory``, ``loop``) with one line here.
"""

from __future__ import annotations

import argparse
import importlib

#: Subcommand name -> module path of the benchmark.
BENCHMARKS: dict[str, str] = {
    "sandbox": "sandbox.bench",
    "memory": "envmemory.bench",
    "loop": "spade_core.selfplay.bench",
    "generation": "plugins.backends.bench",
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    names = ", ".join(BENCHMARKS)
    p = sub.add_parser("bench", help=f"run a benchmark ({names})",
                       description="Run one benchmark; 'spade bench WHAT --help' lists its "
                       "options. Available: " + names + ".")
    p.add_argument("what", choices=sorted(BENCHMARKS), metavar="WHAT",
                   help=f"which benchmark: {names}")
    p.add_argument("options", nargs=argparse.REMAINDER, help="the benchmark's own options")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import the chosen benchmark only now (they may load heavy libraries) and run it."""
    from spade_core.errors import SpadeError

    module_path = BENCHMARKS[args.what]
    try:
        module = importlib.import_module(module_path)
    except ImportError as exc:
        raise SpadeError(f"bench {args.what}: cannot import {module_path}: {exc}") from None
    parser = argparse.ArgumentParser(prog=f"spade bench {args.what}",
                                     description=module.__doc__)
    module.add_arguments(parser)
    return int(module.run(parser.parse_args(args.options)) or 0)
