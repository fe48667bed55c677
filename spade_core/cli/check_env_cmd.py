"""``spade check-env FILE... [--json]``: validate environment programs in the sandbox.

One line per file (a JSON object with ``--json``): file, valid, category, message, first
observation (at most 2 KB), seconds. Exit status 0 when every file is valid, 1 when any is not,
2 on usage errors. All files are checked in one sandbox pool, several at once, as in training.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check-env", help="validate environment programs in the sandbox",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("files", nargs="+", metavar="FILE", help="Python environment program(s)")
    p.add_argument("--json", action="store_true", help="one JSON object per line per file")
    p.add_argument("--family", default=None, metavar="NAME",
                   help="env family whose prelude and solution format to use (e.g. tool-use); "
                   "default: plain SPADE game format")
    p.add_argument("--sandbox", default="process", metavar="NAME",
                   help="sandbox plugin to use (default: process)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="fork servers to start (default: one per CPU)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spade_core.errors import UsageError
    from spade_core.plugins import load_plugins
    from spade_core.validation import validate

    programs = []
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"check-env: {name}: no such file")
        data = path.read_bytes()
        try:
            programs.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            programs.append(None)
    if args.workers is not None and args.workers < 1:
        raise UsageError("check-env: --workers must be at least 1")
    registry = load_plugins().registry
    family = registry.build("env_family", args.family, {}, "--family") if args.family else None
    options = {} if args.workers is None else {"workers": args.workers}
    sandbox = registry.build("sandbox", args.sandbox, options, "--sandbox")
    try:
        method = sandbox.isolation().get("method", "unknown")
        if not args.json:
            print(f"# sandbox isolation: {method}", file=sys.stderr)
        verdicts = iter(validate(sandbox, [p for p in programs if p is not None],
                                 family=family))
        status = 0
        for name, program in zip(args.files, programs):
            row = _row(name, None if program is None else next(verdicts))
            row["isolation"] = method
            if not row["valid"]:
                status = 1
            if args.json:
                print(json.dumps(row, ensure_ascii=False), flush=True)
            else:
                where = f" (line {row['line']})" if row.get("line") else ""
                verdict = "ok" if row["valid"] else f"INVALID [{row['category']}]"
                print(f"{name}: {verdict} {row['message']}{where} ({row['seconds']:.2f} s)",
                      flush=True)
        return status
    finally:
        sandbox.close()


def _row(name: str, verdict) -> dict:  # noqa: ANN001 - a spade_core.records.Verdict or None
    if verdict is None:
        return {"file": name, "valid": False, "category": "syntax",
                "message": "the file is not UTF-8 text", "observation": "", "seconds": 0.0,
                "line": None, "details": {}}
    return {"file": name, "valid": verdict.valid, "category": verdict.category,
            "message": verdict.message, "observation": verdict.observation[:2048],
            "seconds": round(verdict.seconds, 4), "line": verdict.line,
            "details": verdict.details}
