"""Environment records for the memory tests, from the labelled programs in
``tests/envmemory/data/programs.jsonl``, and a few memory-filling helpers."""

from __future__ import annotations

import json
from pathlib import Path

from envmemory.options import MemoryOptions
from spade_core.interfaces.memory import EnvMemory
from spade_core.records import EnvProgram, EnvRecord

DATA = Path(__file__).parents[1] / "envmemory" / "data"


def programs() -> dict[str, dict]:
    """The labelled programs by id (``digit_sum/base``, ``digit_sum/renamed``, ...)."""
    rows = [json.loads(line) for line in (DATA / "programs.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


def program(row: dict) -> EnvProgram:
    return EnvProgram(row["source"], "games", description=row["description"])


def make_record(row: dict, status: str = "frontier") -> EnvRecord:
    made = program(row)
    return EnvRecord(id=made.id, source=made.source, family="games", status=status,
                     description=made.description)


def hashing_options(**kw) -> MemoryOptions:
    """The faiss memory with the hashing embedder (no model) and status rules over 4 rollouts."""
    return MemoryOptions(embedder="hashing", mastery_rollouts=4, too_hard_rollouts=4, **kw)


def fill(memory: EnvMemory) -> list[EnvRecord]:
    """Three records: one mastered, one played twice, one proposed twice."""
    rows = programs()
    records = [make_record(rows[f"{name}/base"]) for name in ("digit_sum", "nim_game", "gcd_lcm")]
    for one in records:
        memory.add(one)
    memory.update_stats(records[0].id, 0, [1, 1, 1, 1], [1, 1, 1, 1], {"regret": 0.0}, 0.0)
    memory.update_stats(records[1].id, 0, [1, 1, 0, 0], [0, 0, 0, 0], {"regret": 0.5}, 0.5)
    memory.update_stats(records[1].id, 1, [1, 1, 1, 0], [1, 0, 0, 0], {"regret": 0.5}, 0.5)
    memory.add(records[2])  # proposed twice
    return records


def snapshot_view(memory: EnvMemory) -> list[tuple]:
    """What a checkpoint must bring back, comparable with ``==``."""
    return [(r.id, r.status, r.times_proposed, json.dumps(r.stats, sort_keys=True),
             [(h.iteration, h.hinted, h.unhinted, h.figures) for h in r.history])
            for r in memory.records()]
