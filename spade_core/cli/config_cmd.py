"""``spade config check``: validate a config, and check it against this machine (preflight),
without running or loading anything."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="work with run configs",
                       description="Work with run configs without running anything.")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = csub.add_parser(
        "check", help="validate a config and print it resolved",
        description="Validate a config (the schema, then each selected plugin's options; every "
                    "problem reported together), check it against this machine (preflight: "
                    "model and corpus paths, installed extras, settings that must agree) and "
                    "print it with every default filled in. Exit status 2 on any problem.")
    check.add_argument("config", help="path of the YAML config")
    check.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override a key, e.g. --set run.seed=3 (repeatable)")
    check.add_argument("--json", action="store_true", help="print the resolved config as JSON")
    check.add_argument("--schema-only", action="store_true",
                       help="skip the checks against this machine (model and corpus paths, "
                            "installed extras, settings that must agree): e.g. a GPU config "
                            "checked on a laptop")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    import yaml

    from spade_core.api import check, load_config, load_plugins

    loaded = load_plugins()
    resolved = load_config(args.config, args.overrides, loaded)
    if not args.schema_only:
        from spade_core.errors import ConfigError

        try:
            check(resolved, loaded, raise_problems=True)
        except ConfigError as exc:
            raise ConfigError(
                f"{exc} The config itself is valid; to check only that on a machine that is not "
                f"meant to run it (a GPU config on a laptop): spade config check {args.config} "
                "--schema-only") from None
    data = resolved.to_dict()
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(f"# {args.config}: ok")
        print(yaml.safe_dump(data, sort_keys=False), end="")
    return 0
