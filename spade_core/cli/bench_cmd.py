"""``spade bench WHAT``: micro-benchmarks of one part of the system.

The core declares its own benchmark here (``loop``, the self-play loop's overhead); plugins add
theirs through the ``register_commands`` hook with ``group="bench"`` (``sandbox``, ``memory`` and
``generation`` come from the built-in plugins that way). A benchmark's arguments are set up, and
its module imported, only when it is the one typed, so ``spade --help`` stays light.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from spade_core.commands import Command, add_parsers

GROUP = "bench"


def _loop_arguments(parser: argparse.ArgumentParser) -> None:
    from spade_core.selfplay import loop_bench

    parser.description = loop_bench.__doc__
    loop_bench.add_arguments(parser)


def _loop_run(args: argparse.Namespace) -> int:
    from spade_core.selfplay import loop_bench

    return int(loop_bench.run(args) or 0)


#: The core's own benchmarks (plugins cannot take these names).
CORE_BENCHMARKS: tuple[Command, ...] = (
    Command("loop", _loop_arguments, _loop_run, group=GROUP,
            help="the self-play loop's own overhead, with a zero-latency scripted policy"),
)


def add_parser(sub: argparse._SubParsersAction, benchmarks: Iterable[Command] = (),
               typed: str | None = None) -> None:
    """Add ``spade bench`` with the core's benchmarks and the plugins' ``benchmarks``; only the
    ``typed`` one gets its arguments."""
    members = sorted([*CORE_BENCHMARKS, *benchmarks], key=lambda c: c.name)
    names = ", ".join(c.name for c in members)
    p = sub.add_parser("bench", help=f"run a benchmark ({names})",
                       description="Run one benchmark; 'spade bench WHAT --help' lists its "
                       f"options. Available: {names}.")
    bench_sub = p.add_subparsers(dest="bench_what", metavar="WHAT", required=True,
                                 title="benchmarks")
    add_parsers(bench_sub, members, typed)
