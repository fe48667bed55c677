"""Environment program files: read programs from a folder of ``.py`` files or a JSONL file, and
pick the family a program belongs to (``spade envs import`` and fixed pools share these)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from spade_core.interfaces.family import EnvFamily

#: JSONL fields that may hold a program's source, tried in this order.
CODE_FIELDS: tuple[str, ...] = ("code", "source", "program", "env_code", "game_code",
                                "environment", "env")
DESCRIPTION_FIELDS: tuple[str, ...] = ("description", "name", "title", "skill", "game_name")


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


def choose_family(source: str, families: Sequence[EnvFamily]
                  ) -> tuple[EnvFamily | None, list[str]]:
    """The first family whose static checks accept ``source`` (a family's default checks accept
    everything), or ``None`` with every family's problems."""
    problems: list[str] = []
    for family in families:
        found = family.static_problems(source)
        if not found:
            return family, []
        problems.append(f"{family.name}: {found[0]}")
    return None, problems
