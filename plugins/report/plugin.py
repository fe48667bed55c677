"""Registers ``spade report RUN_DIR`` (entry point ``report``): one offline HTML page of a run.

Light at import: the report's modules, and matplotlib, jinja2 and pygments with them, are imported
only when the command runs.
"""

from __future__ import annotations

import argparse
import sys

from spade_core.hookspecs import hookimpl


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``spade report``."""
    parser.description = ("One self-contained HTML page of a run (plots and an environment "
                          "browser), for a finished run or one still in progress; of an "
                          "experiment folder, its curves and table (docs/report.md).")
    parser.add_argument("run_dir", metavar="RUN_DIR",
                        help="run directory written by `spade run`, or experiment folder "
                        "written by `spade experiment`")
    parser.add_argument("--out", "-o", metavar="FILE",
                        help="where to write the page (default: RUN_DIR/report.html)")
    parser.add_argument("--no-run-reports", action="store_true",
                        help="experiment folder: do not (re)write each run's own report")
    parser.add_argument("--neighbours", type=int, default=5, metavar="K",
                        help="nearest environments in memory shown per environment "
                        "(default 5; 0: none)")
    parser.add_argument("--max-envs", type=int, default=0, metavar="N",
                        help="keep only the N latest environments in the browser (default 0: all)")


def run(args: argparse.Namespace) -> int:
    """Build the page and print its path."""
    from spade_core.errors import UsageError

    if args.neighbours < 0 or args.max_envs < 0:
        raise UsageError("report: --neighbours and --max-envs must be 0 or more")
    try:
        from plugins.report.html_report import build_report
    except ImportError as exc:
        raise UsageError(f"report: the report needs matplotlib, jinja2 and pygments: {exc}; "
                         "reinstall spade-rl (pip install -e .)") from exc
    from plugins.report.experiment_page import build_experiment_page, is_experiment

    if is_experiment(args.run_dir):
        path = build_experiment_page(args.run_dir, args.out, run_reports=not args.no_run_reports,
                                     neighbours=args.neighbours, max_envs=args.max_envs)
    else:
        path = build_report(args.run_dir, args.out, neighbours=args.neighbours,
                            max_envs=args.max_envs)
    print(path)
    print(f"spade: report written to {path} (open it in a browser; it needs no network)",
          file=sys.stderr)
    return 0


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("report", add_arguments, run, help="write an offline HTML report of a run directory")
