"""``spade suites``: the environments of the benchmark suites whose packages conflict with
spade-rl's (bfcl, tau2, gem). ``spade suites install bfcl`` makes one (uv when found, else venv
and pip), ``spade suites list`` says which are ready and where, ``spade suites path NAME`` prints
an environment's interpreter. ``spade eval`` finds them by itself."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from plugins.evals.suite_envs import DIR_VARIABLE, SUITE_ENVS

    actions = parser.add_subparsers(dest="suites_action", metavar="ACTION", required=True)
    install = actions.add_parser(
        "install", help="make suite environments (only those not current, unless --force)",
        description="Make the virtual environment of each named suite whose packages conflict "
                    "with spade-rl's, from its pinned lock file, with uv (else venv and pip); "
                    "spade eval then scores that suite on its interpreter.")
    install.add_argument("names", nargs="*", metavar="NAME", choices=[*SUITE_ENVS, []],
                         help=f"suites to install: {', '.join(SUITE_ENVS)}")
    install.add_argument("--all", action="store_true", help="every suite")
    install.add_argument("--force", action="store_true", help="make them again from nothing")
    actions.add_parser("list", help=f"each suite's environment and its state ({DIR_VARIABLE} "
                       "moves them)",
                       description="Each suite with an environment of its own: where it is "
                                   "and whether it is ready, missing or stale.")
    path = actions.add_parser("path", help="print a suite environment's interpreter",
                              description="Print the Python interpreter of a suite's "
                                          "environment (an error when it is not ready).")
    path.add_argument("name", metavar="NAME", choices=list(SUITE_ENVS),
                      help=f"the suite: {', '.join(SUITE_ENVS)}")


def run(args: argparse.Namespace) -> int:
    from spade_core.errors import UsageError

    from plugins.evals import suite_envs

    if args.suites_action == "list":
        for name, spec in suite_envs.SUITE_ENVS.items():
            found = suite_envs.problem(name)
            state = "ready" if found is None else "not ready"
            print(f"{name:6} {state:9}  {suite_envs.env_dir(name)}\n       {spec.summary}"
                  + ("" if found is None else f"\n       {found}"))
        return 0
    if args.suites_action == "path":
        print(suite_envs.require(args.name))
        return 0
    names = list(suite_envs.SUITE_ENVS) if args.all else list(dict.fromkeys(args.names))
    if not names:
        raise UsageError("suites install: name the suites (" + ", ".join(suite_envs.SUITE_ENVS)
                         + ") or give --all")
    for name in names:
        python = suite_envs.install(name, force=args.force)
        print(f"{name}: ready, {python}")
    return 0
