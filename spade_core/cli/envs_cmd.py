"""'spade envs import PATH --run-dir RUN_DIR': load environment programs (a folder of .py
files or a JSONL with a code field, e.g. released SPADE environments) into a run's memory as a
fixed pool, validating each in the sandbox.

Every program gets a verdict. Valid ones are stored with status frontier (playable), invalid
ones as rejected with the verdict's category and message, so the import can be audited with
'spade memory'. Each program's family is the first selected family whose static checks accept
it and in which it is valid, else the first that accepts it ('--family' picks and orders them;
default: every installed family). Package files (__init__.py) in a folder are skipped. Exit
status 0 when
every program is valid, 1 when any is not, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spade_core.commands import Command, add_parsers
from spade_core.program_files import CODE_FIELDS, read_programs
from spade_core.messages import plural

#: ``envs`` is a group: plugins add members with ``register(name, ..., group="envs")`` (the
#: ``exports`` plugin adds ``envs export``).
GROUP = "envs"
#: The core's own members (plugins cannot take these names).
CORE_MEMBERS: tuple[str, ...] = ("import",)


def add_parser(sub: argparse._SubParsersAction, members: Iterable[Command] = (),
               typed: str | None = None) -> None:
    """Add ``spade envs`` with the core's ``import`` and the plugins' ``members``; only the
    ``typed`` member gets its arguments (``import`` always has them: they are cheap)."""
    members = sorted(members, key=lambda c: c.name)
    actions = ", ".join(sorted([*CORE_MEMBERS, *(c.name for c in members)]))
    p = sub.add_parser("envs", help=f"manage environment programs ({actions})",
                       description="Manage environment programs; 'spade envs ACTION --help' "
                       f"lists an action's options. Available: {actions}.")
    esub = p.add_subparsers(dest="envs_command", metavar="ACTION", required=True)
    imp = esub.add_parser("import", help="validate programs and add them to a run's memory",
                          description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    imp.add_argument("path", metavar="PATH", help="folder of .py programs (searched recursively) "
                     "or a .jsonl file with one program per line")
    imp.add_argument("--run-dir", required=True, metavar="DIR",
                     help="run directory whose memory receives the programs (created if needed)")
    imp.add_argument("--family", action="append", metavar="NAME",
                     help="family to consider (repeatable, in order of preference); default: "
                     "every installed family")
    imp.add_argument("--field", metavar="NAME",
                     help=f"JSONL field holding the code (default: first of {', '.join(CODE_FIELDS)})")
    imp.add_argument("--memory", default="faiss", metavar="NAME",
                     help="environment memory plugin (default: faiss)")
    imp.add_argument("--memory-options", default="{}", metavar="JSON",
                     help="options of the memory plugin as a JSON object (default: {})")
    imp.add_argument("--sandbox", default="process", metavar="NAME",
                     help="sandbox plugin that validates the programs (default: process)")
    imp.add_argument("--workers", type=int, default=None, metavar="N",
                     help="sandbox fork servers (default: the sandbox's own)")
    imp.add_argument("--json", action="store_true", help="one JSON object per line per program")
    imp.set_defaults(func=run_import)
    add_parsers(esub, members, typed)


def json_object_option(text: str, where: str) -> dict[str, Any]:
    """A command-line option that holds a JSON object, or a usage error naming ``where``."""
    from spade_core.errors import UsageError

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where} is not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a JSON object")
    return value


def run_import(args: argparse.Namespace) -> int:
    from spade_core.api import import_programs
    from spade_core.errors import UsageError
    from spade_core.records import EnvStatus, program_id

    memory_options = json_object_option(args.memory_options, "envs import: --memory-options")
    if args.workers is not None and args.workers < 1:
        raise UsageError("envs import: --workers must be at least 1")
    programs = list(read_programs(Path(args.path), args.field))
    if not programs:
        raise UsageError(f"envs import: no programs found in {args.path}")
    run_dir = Path(args.run_dir)
    checks = import_programs(
        programs, run_dir, args.family, memory=args.memory, memory_options=memory_options,
        sandbox=args.sandbox,
        sandbox_options={} if args.workers is None else {"workers": args.workers},
        on_skip=lambda name, exc: print(f"# skipping env family {name!r}: {exc}",
                                        file=sys.stderr))
    for check in checks:
        verdict = check.verdict
        row = {"program": check.label,
               "id": program_id(check.source) if check.source else None,
               "family": check.family, "valid": verdict.valid, "category": verdict.category,
               "message": verdict.message,
               "status": None if check.source is None else (
                   EnvStatus.FRONTIER if verdict.valid else EnvStatus.REJECTED)}
        if args.json:
            print(json.dumps(row, ensure_ascii=False), flush=True)
        else:
            shown = "ok" if verdict.valid else f"INVALID [{verdict.category}]"
            print(f"{check.label}: {shown} {verdict.message} -> {row['family'] or '-'}, "
                  f"{row['status'] or 'not stored'}", flush=True)
    valid = sum(1 for check in checks if check.verdict.valid)
    print(f"# imported {plural(len(programs), 'program')} into {run_dir}: {valid} valid, "
          f"{len(programs) - valid} invalid", file=sys.stderr)
    return 0 if valid == len(checks) else 1
