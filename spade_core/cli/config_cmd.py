"""``spade config check``: validate a config without running anything."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="work with run configs")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = csub.add_parser("check", help="validate a config and print it resolved")
    check.add_argument("config", help="path of the YAML config")
    check.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override a key, e.g. --set run.seed=3 (repeatable)")
    check.add_argument("--json", action="store_true", help="print the resolved config as JSON")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from spade_core.config.load import load_config
    from spade_core.plugins import load_plugins

    import yaml

    resolved = load_config(args.config, load_plugins().registry, args.overrides)
    data = resolved.to_dict()
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(f"# {args.config}: ok")
        print(yaml.safe_dump(data, sort_keys=False), end="")
    return 0
