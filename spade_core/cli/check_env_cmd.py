"""'spade check-env PATH... [--json]': validate environment programs in the sandbox.

PATH is a .py file, a folder (every .py in it, recursively, but package __init__.py files) or
a .jsonl file (one program per line, as 'spade envs import' reads it). One line per program (a
JSON object with '--json'): file, family, valid, category, message, first observation (at most
2 KB), seconds. Without '--family' a program is checked in the installed families whose
injected names (ToolUseBaseEnv, extract_boxed, ...) it uses; a self-contained program in the
plain SPADE game format, then in each installed family that accepts it (one may provide a
module it imports, such as math_verify, or read its solution's format); the first in which it
is valid is chosen, and when none is, the first one's verdict is shown. Exit status 0
when every program is valid, 1 when any is not, 2 on usage errors. All programs are checked in
one sandbox pool, several at once, as in training.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spade_core.records import Verdict


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check-env", help="validate environment programs in the sandbox",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("files", nargs="+", metavar="PATH",
                   help="Python environment program(s), folders of them, or .jsonl files")
    p.add_argument("--json", action="store_true", help="one JSON object per line per program")
    p.add_argument("--family", default=None, metavar="NAME",
                   help="env family whose prelude and solution format to use for every program "
                   "(e.g. tool-use); default: chosen per program, as `spade envs import` does")
    p.add_argument("--field", metavar="NAME", default=None,
                   help="JSONL field holding the code (default: the first of the usual names)")
    p.add_argument("--sandbox", default="process", metavar="NAME",
                   help="sandbox plugin to use (default: process)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="fork servers to start (default: one per CPU)")
    p.set_defaults(func=run)


def read_paths(paths: list[str], field: str | None) -> list[tuple[str, str | None]]:
    """``(label, source or None when not UTF-8)`` for every program the paths name."""
    from spade_core.errors import UsageError
    from spade_core.program_files import read_programs

    programs: list[tuple[str, str | None]] = []
    for name in paths:
        path = Path(name)
        if path.is_dir() or (path.is_file() and path.suffix == ".jsonl"):
            found = [(label, source) for label, source, _ in
                     read_programs(path, field, command="check-env")]
            if not found:
                raise UsageError(f"check-env: {name}: no programs found (a folder needs .py "
                                 "files, a .jsonl file one JSON object per line)")
            programs += found
            continue
        if not path.is_file():
            raise UsageError(f"check-env: {name}: no such file or folder")
        try:
            programs.append((name, path.read_bytes().decode("utf-8")))
        except UnicodeDecodeError:
            programs.append((name, None))
    return programs


def _skipped(name: str, exc: Exception) -> None:
    """Say on stderr which installed family cannot start (an optional one may lack its
    library)."""
    print(f"# skipping env family {name!r}: {exc}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from spade_core.api import check_programs
    from spade_core.errors import UsageError
    from spade_core.messages import json_line

    programs = read_paths(args.files, args.field)
    if args.workers is not None and args.workers < 1:
        raise UsageError("check-env: --workers must be at least 1")
    found = check_programs(programs, [args.family] if args.family else None,
                           sandbox=args.sandbox,
                           sandbox_options={} if args.workers is None else
                           {"workers": args.workers},
                           on_skip=None if args.json else _skipped)
    method = found.isolation.get("method", "unknown")
    if not args.json:
        print(f"# sandbox isolation: {method}", file=sys.stderr)
    status = 0
    for check in found.checks:
        row = _row(check.label, check.verdict, check.family)
        row["isolation"] = method
        if not row["valid"]:
            status = 1
        if args.json:
            print(json_line(row), flush=True)
        else:
            where = f" (line {row['line']})" if row.get("line") else ""
            shown = "ok" if row["valid"] else f"INVALID [{row['category']}]"
            as_family = f" [family {row['family']}]" if row["family"] else ""
            print(f"{check.label}: {shown} {row['message']}{where}{as_family} "
                  f"({row['seconds']:.2f} s)", flush=True)
    return status


def _row(name: str, verdict: "Verdict", family: str | None) -> dict:
    """One output row of a program's verdict."""
    return {"file": name, "family": family, "valid": verdict.valid,
            "category": verdict.category, "message": verdict.message,
            "observation": verdict.observation[:2048], "seconds": round(verdict.seconds, 4),
            "line": verdict.line, "details": verdict.details}
