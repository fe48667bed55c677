"""The ``none`` memory (the reference's no-memory ablation): the run's records live in a dict
for this process only, with no dedupe, no search and no prompt examples.

The loop still needs what a memory tells it (each environment's statistics and status, the
frontier to replay, a checkpoint to resume from), so records are kept and the status rules of
:mod:`envmemory.mastery` applied; nothing is written outside the run's checkpoints."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from envmemory.mastery import MasteryRule, update_stats
from spade_core.interfaces.memory import EnvMemory
from spade_core.records import EnvIteration, EnvProgram, EnvRecord


class NoMemory(EnvMemory):
    """Records in a dict; never a duplicate, never an example."""

    def __init__(self, success_threshold: float = 1.0) -> None:
        self.by_id: dict[str, EnvRecord] = {}
        self.rule = MasteryRule(success_reward=success_threshold)

    def find_duplicate(self, program: EnvProgram) -> tuple[EnvRecord, float] | None:
        return None

    def add(self, record: EnvRecord) -> None:
        known = self.by_id.get(record.id)
        if known is None:
            self.by_id[record.id] = record
        else:
            self.by_id[record.id] = replace(known, times_proposed=known.times_proposed + 1)

    def update_stats(self, env_id: str, iteration: int, hinted: Sequence[float],
                     unhinted: Sequence[float], figures: dict[str, float],
                     designer_reward: float) -> EnvRecord:
        record = self.by_id.get(env_id)
        if record is None:
            raise KeyError(f"environment {env_id!r} is not in the memory; add() it first")
        stats, status = update_stats(record.stats, record.status, hinted, unhinted, figures,
                                     designer_reward, self.rule)
        entry = EnvIteration(iteration=iteration, hinted=[float(x) for x in hinted],
                             unhinted=[float(x) for x in unhinted],
                             figures={k: float(v) for k, v in figures.items()},
                             designer_reward=float(designer_reward))
        self.by_id[env_id] = replace(record, stats=stats, status=status,
                                     history=[*record.history, entry])
        return self.by_id[env_id]

    def get(self, env_id: str) -> EnvRecord | None:
        return self.by_id.get(env_id)

    def frontier_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        return []

    def negative_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        return []

    def records(self) -> Iterator[EnvRecord]:
        return iter(list(self.by_id.values()))

    def search(self, query, k: int = 10, *, statuses=None, family=None):  # noqa: ANN001
        return []

    def add_figures(self, env_id: str, iteration: int, figures: dict[str, float]) -> bool:
        record = self.by_id.get(env_id)
        at = [k for k, h in enumerate(record.history) if h.iteration == iteration] if record else []
        if not at:
            return False
        history = list(record.history)
        entry = history[at[0]]
        history[at[0]] = replace(entry, figures=entry.figures | {k: float(v)
                                                                  for k, v in figures.items()})
        self.by_id[env_id] = replace(record, history=history)
        return True

    def set_status(self, env_id: str, status: str) -> EnvRecord:
        if env_id not in self.by_id:
            raise KeyError(f"environment {env_id!r} is not in the memory")
        self.by_id[env_id] = replace(self.by_id[env_id], status=status)
        return self.by_id[env_id]

    def clear(self) -> None:
        self.by_id.clear()
