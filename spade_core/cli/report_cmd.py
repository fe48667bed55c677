"""``spade report RUN_DIR [--out FILE]``: one self-contained HTML page of a run (plots and an
environment browser), for a finished run or one still in progress (``docs/report.md``)."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write an offline HTML report of a run directory")
    p.add_argument("run_dir", metavar="RUN_DIR", help="run directory written by `spade run`")
    p.add_argument("--out", "-o", metavar="FILE",
                   help="where to write the page (default: RUN_DIR/report.html)")
    p.add_argument("--neighbours", type=int, default=5, metavar="K",
                   help="nearest environments in memory shown per environment (default 5; 0: none)")
    p.add_argument("--max-envs", type=int, default=0, metavar="N",
                   help="keep only the N latest environments in the browser (default 0: all)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spade_core.errors import UsageError

    if args.neighbours < 0 or args.max_envs < 0:
        raise UsageError("report: --neighbours and --max-envs must be 0 or more")
    try:
        from plugins.report import build_report
    except ImportError as exc:
        raise UsageError(f"report: the report needs the plugins.report package and its "
                         f"libraries (matplotlib, jinja2, pygments): {exc}; reinstall spade-rl "
                         "(pip install -e .)") from exc
    path = build_report(args.run_dir, args.out, neighbours=args.neighbours,
                        max_envs=args.max_envs)
    print(path)
    print(f"spade: report written to {path} (open it in a browser; it needs no network)",
          file=sys.stderr)
    return 0
