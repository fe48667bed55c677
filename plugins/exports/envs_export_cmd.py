"""``spade envs export RUN_DIR --format NAME --out DIR``: the environments of a run's memory in a
format other tools load. The formats are components (kind ``export_format``); the built-in ones:

* ``jsonl``: ``DIR/environments.jsonl``, one environment per line (program, family, status,
  description, hint, statistics).
* ``hf-dataset``: the same rows as a ``datasets`` dataset saved with ``save_to_disk``.
* ``verifiers``: an installable package (named after the run and its iteration, or ``--name``)
  whose ``load_environment()`` returns a verifiers environment over those rows.
* ``openenv``: a folder with an ``openenv.yaml``, the rows, and an OpenEnv ``Environment``
  (``server/app.py`` serves it over HTTP).

Programs are untrusted code: the verifiers and OpenEnv exports run them only through this
project's sandbox (``--sandbox``, default ``process``), so they need spade-rl installed where
they run. The memory is opened read-only (safe while the run writes). A plugin adds a format with
the ``register_export_formats`` hook."""

from __future__ import annotations

import argparse
import json
import sys

from spade_core.messages import plural

#: The built-in formats (a plugin may register more).
FORMATS = ("jsonl", "hf-dataset", "verifiers", "openenv")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from spade_core.gym_registry import PLAYABLE_STATUSES

    parser.add_argument("run_dir", metavar="RUN_DIR",
                        help="run directory (or one filled by `spade envs import`)")
    parser.add_argument("--format", required=True, metavar="NAME",
                        help="what to write: an installed export format (built in: "
                             f"{', '.join(FORMATS)}; spade plugins lists them all)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder to write (must not exist, or be empty)")
    parser.add_argument("--status", action="append", metavar="STATUS",
                        help="export records with this status (repeatable; default: "
                        f"{', '.join(PLAYABLE_STATUSES)})")
    parser.add_argument("--family", action="append", metavar="NAME",
                        help="only this family (repeatable; default: all)")
    parser.add_argument("--sandbox", default="process", metavar="NAME",
                        help="sandbox the verifiers/openenv exports run programs in "
                        "(default: process)")
    parser.add_argument("--name", metavar="PACKAGE",
                        help="the verifiers package's import name (default: spade_ + the run's "
                             "name + _iter + its latest iteration, e.g. spade_quickstart_iter2; "
                             "two exports with different names install side by side)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")


def run(args: argparse.Namespace) -> int:
    from plugins.exports.formats import export_envs

    plugins = getattr(args, "_plugins", None)
    result = export_envs(args.run_dir, args.out, args.format, statuses=args.status,
                         families=args.family, sandbox=args.sandbox,
                         registry=plugins.registry if plugins is not None else None,
                         name=args.name)
    if args.json:
        print(json.dumps(result))
    else:
        named = f" (package {result['name']})" if "name" in result else ""
        print(f"exported {plural(result['environments'], 'environment')} as {result['format']}"
              f"{named} to {result['out']}")
    if not result["environments"]:
        print("# no environment matched --status/--family", file=sys.stderr)
    return 0
