"""``spade memory stats|search|export RUN_DIR``: read a run's environment memory (read-only, safe
while the run writes)."""

from __future__ import annotations

import argparse
import importlib

#: The module that implements the actions (the built-in FAISS memory's store format).
IMPLEMENTATION = "envmemory.cli"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help="inspect a run's environment memory (stats, search, export)")
    msub = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("run_dir", metavar="RUN_DIR",
                       help="run directory (or the memory folder itself)")
        q.add_argument("--memory-path", default="memory",
                       help="memory folder inside RUN_DIR (default: memory)")

    stats = msub.add_parser("stats", help="counts by status and family, index state")
    common(stats)
    stats.add_argument("--json", action="store_true", help="print one JSON object")
    stats.set_defaults(func=_action("run_stats"))

    search = msub.add_parser("search", help="nearest stored environments to a text or a file")
    common(search)
    search.add_argument("query", metavar="TEXT_OR_FILE",
                        help="free text, or a file holding an environment program")
    search.add_argument("-k", type=int, default=5, help="how many results (default 5)")
    search.add_argument("--status", action="append",
                        help="only records with this status (repeatable)")
    search.add_argument("--family", help="only records of this family")
    search.add_argument("--json", action="store_true", help="print a JSON list")
    search.set_defaults(func=_action("run_search"))

    export = msub.add_parser("export", help="every record as JSON lines")
    common(export)
    export.add_argument("-o", "--output", help="write to this file instead of stdout")
    export.add_argument("--embeddings", action="store_true", help="include embedding vectors")
    export.set_defaults(func=_action("run_export"))




def _action(name: str):
    def run(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(IMPLEMENTATION), name)(args)

    return run
