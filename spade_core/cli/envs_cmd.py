"""``spade envs import PATH --run-dir RUN_DIR``: load environment programs (a folder of ``.py``
files or a JSONL with a code field, e.g. released SPADE environments) into a run's memory as a
fixed pool, validating each in the sandbox.

Every program gets a verdict. Valid ones are stored with status ``frontier`` (playable), invalid
ones as ``rejected`` with the verdict's category and message, so the import can be audited with
``spade memory``. Each program's family is the first selected family whose static checks accept
it (``--family`` picks and orders them; default: every installed family). Exit status 0 when
every program is valid, 1 when any is not, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: JSONL fields that may hold a program's source, tried in this order.
CODE_FIELDS: tuple[str, ...] = ("code", "source", "program", "env_code", "game_code",
                                "environment", "env")
DESCRIPTION_FIELDS: tuple[str, ...] = ("description", "name", "title", "skill", "game_name")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("envs", help="manage environment programs (import a fixed pool)")
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


def read_programs(path: Path, field: str | None = None) -> Iterator[tuple[str, str | None, str]]:
    """``(label, source or None when unreadable, description)`` for each program under ``path``:
    every ``*.py`` file of a folder (sorted), or every line of a ``.jsonl`` file."""
    from spade_core.errors import UsageError

    if path.is_dir():
        for file in sorted(p for p in path.rglob("*.py") if p.is_file()):
            try:
                yield str(file), file.read_text(encoding="utf-8"), ""
            except UnicodeDecodeError:
                yield str(file), None, ""
        return
    if not path.is_file():
        raise UsageError(f"envs import: {path}: no such file or folder")
    if path.suffix == ".py":
        yield str(path), path.read_text(encoding="utf-8", errors="replace"), ""
        return
    fields = (field,) if field else CODE_FIELDS
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            label = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"envs import: {label}: not JSON ({exc.msg}); expected one JSON "
                                 "object per line") from None
            code = next((row[f] for f in fields if isinstance(row, dict)
                         and isinstance(row.get(f), str)), None)
            if code is None:
                raise UsageError(f"envs import: {label}: no code field (looked for "
                                 f"{', '.join(fields)}); name it with --field")
            description = next((str(row[f]) for f in DESCRIPTION_FIELDS if row.get(f)), "")
            yield label, code, description


def choose_family(source: str, families: list[Any]) -> tuple[Any | None, list[str]]:
    """The first family whose static checks accept ``source`` (families without static checks
    accept everything), or ``None`` with every family's problems."""
    problems: list[str] = []
    for family in families:
        check = getattr(family, "static_problems", None)
        found = check(source) if callable(check) else []
        if not found:
            return family, []
        problems.append(f"{family.name}: {found[0]}")
    return None, problems


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


def _build(registry: Any, kind: str, name: str, options: dict, where: str,
           context: Any) -> Any:
    from spade_core.errors import ConfigError

    component = registry.resolve(kind, name, where)
    validated: Any = options
    if component.options is not None:
        try:
            validated = component.options.model_validate(options)
        except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError, shown to the user
            raise ConfigError(f"{where}: invalid options for {name!r}: {exc}") from None
    return component.build(validated, context)


def run_import(args: argparse.Namespace) -> int:
    from spade_core.components import BuildContext
    from spade_core.errors import SpadeError, UsageError
    from spade_core.interfaces.memory import EnvRecord
    from spade_core.plugins import load_plugins
    from spade_core.records import Verdict, program_id

    memory_options = json_object_option(args.memory_options, "envs import: --memory-options")
    if args.workers is not None and args.workers < 1:
        raise UsageError("envs import: --workers must be at least 1")
    programs = list(read_programs(Path(args.path), args.field))
    if not programs:
        raise UsageError(f"envs import: no programs found in {args.path}")
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    registry = load_plugins().registry
    context = BuildContext(run_dir=run_dir)
    if args.family:
        families = [_build(registry, "env_family", n, {}, "--family", context)
                    for n in args.family]
    else:  # every installed family that can start (an optional one may lack its library)
        families = []
        for name in registry.names("env_family"):
            try:
                families.append(_build(registry, "env_family", name, {}, "--family", context))
            except SpadeError as exc:
                print(f"# skipping env family {name!r}: {exc}", file=sys.stderr)
    verdicts: dict[int, tuple[Any, Verdict]] = {}
    by_family: dict[str, list[int]] = {}
    for index, (_, source, _) in enumerate(programs):
        if source is None:
            verdicts[index] = (None, Verdict(False, "syntax", "the file is not UTF-8 text"))
            continue
        family, problems = choose_family(source, families)
        if family is None:
            verdicts[index] = (None, Verdict(False, "interface", "no family accepts it: "
                                             + "; ".join(problems)))
        else:
            by_family.setdefault(family.name, []).append(index)
    sandbox_options = {} if args.workers is None else {"workers": args.workers}
    sandbox = _build(registry, "sandbox", args.sandbox, sandbox_options, "--sandbox", context)
    try:
        for family in families:
            indices = by_family.get(family.name, [])
            if indices:
                checked = sandbox.check([programs[i][1] for i in indices], family=family)
                verdicts.update({i: (family, v) for i, v in zip(indices, checked)})
    finally:
        sandbox.close()
    memory = _build(registry, "env_memory", args.memory, memory_options, "--memory", context)
    status = 0
    try:
        for index, (label, source, description) in enumerate(programs):
            family, verdict = verdicts[index]
            if source is not None:
                memory.add(EnvRecord(
                    id=program_id(source), source=source,
                    family=family.name if family is not None else "unknown",
                    status="frontier" if verdict.valid else "rejected",
                    doc_id=f"import:{label}", description=description or label,
                    verdict_category=verdict.category, verdict_message=verdict.message))
            status = status if verdict.valid else 1
            row = {"program": label, "id": program_id(source) if source else None,
                   "family": family.name if family is not None else None,
                   "valid": verdict.valid, "category": verdict.category,
                   "message": verdict.message,
                   "status": None if source is None else ("frontier" if verdict.valid
                                                          else "rejected")}
            if args.json:
                print(json.dumps(row, ensure_ascii=False), flush=True)
            else:
                shown = "ok" if verdict.valid else f"INVALID [{verdict.category}]"
                print(f"{label}: {shown} {verdict.message} -> {row['family'] or '-'}, "
                      f"{row['status'] or 'not stored'}", flush=True)
    finally:
        memory.close()
    valid = sum(1 for _, v in verdicts.values() if v.valid)
    print(f"# imported {len(programs)} programs into {run_dir}: {valid} valid, "
          f"{len(programs) - valid} invalid", file=sys.stderr)
    return status
