"""A run's environments as rows, written as JSONL or a ``datasets`` dataset; the verifiers and
OpenEnv exports build on these rows (the formats of :mod:`plugins.exports.formats`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spade_core.errors import UsageError

ROWS_FILE = "environments.jsonl"
#: Columns of every export, in order.
COLUMNS = ("id", "family", "status", "description", "hint", "skill", "level", "source",
           "instructions", "stats")


def read_rows(run_dir: str | Path, statuses: Sequence[str] | None = None,
              families: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The run's records (read-only, through the memory component the run names) as rows; each
    row's ``instructions`` are its family's agent instructions, ``stats`` a JSON text."""
    from spade_core.gym_registry import PLAYABLE_STATUSES
    from spade_core.program_files import installed_families
    from spade_core.run_memory import open_run_memory

    if not Path(run_dir).is_dir():
        raise UsageError(f"envs export: {run_dir} is not a directory")
    wanted = tuple(statuses or PLAYABLE_STATUSES)
    installed = installed_families()
    memory = open_run_memory(run_dir)
    try:
        records = [r for r in memory.records() if r.status in wanted
                   and (not families or r.family in families)]
    finally:
        memory.close()
    rows = []
    for r in records:
        family = installed.get(r.family)
        rows.append({"id": r.id, "family": r.family, "status": r.status,
                     "description": r.description, "hint": r.hint, "skill": r.skill,
                     "level": r.level, "source": r.source,
                     "instructions": family.agent_instructions() if family else "",
                     "stats": json.dumps(r.stats, sort_keys=True, default=str)})
    return rows


def prepare_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out}: already exists and is not an empty folder")
    out.mkdir(parents=True, exist_ok=True)


def write_jsonl(rows: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_hf_dataset(rows: list[dict[str, Any]], out: Path) -> None:
    """``datasets.Dataset.save_to_disk``; load with ``datasets.load_from_disk(out)``."""
    from datasets import Dataset, Features, Value

    features = Features({c: Value("int64") if c == "level" else Value("string")
                         for c in COLUMNS})
    columns = {c: [row[c] for row in rows] for c in COLUMNS}  # from_dict: an empty export too
    # One shard at least: datasets writes none for an empty dataset and cannot load that back.
    Dataset.from_dict(columns, features=features).save_to_disk(
        str(out), num_shards=None if rows else 1)
