"""``spade run CONFIG``: validate the config, then run self-play."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run self-play from a YAML config")
    p.add_argument("config", help="path of the YAML config (see configs/quickstart.yaml)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a key, e.g. --set run.iterations=3 (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spade_core.config.load import load_config
    from spade_core.plugins import load_plugins

    loaded = load_plugins()
    # Everything below is validated before any heavy component is imported or built.
    resolved = load_config(args.config, loaded.registry, args.overrides)
    from spade_core.selfplay.runner import run as run_selfplay

    run_selfplay(resolved, loaded)
    return 0
