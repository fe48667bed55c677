"""Environment memories: what has been proposed, played, mastered; near-duplicate refusal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from spade_core.records import EnvProgram

#: Status values an environment record moves through.
ENV_STATUSES: tuple[str, ...] = ("frontier", "mastered", "too_hard", "rejected", "duplicate")


@dataclass
class EnvIteration:
    """One iteration's play of an environment: the raw episode rewards and what the estimator said."""

    iteration: int
    hinted: list[float] = field(default_factory=list)
    unhinted: list[float] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)
    designer_reward: float = 0.0
    at: float = 0.0


@dataclass
class EnvRecord:
    """Everything the memory keeps about one proposed environment."""

    id: str
    source: str
    family: str
    status: str
    doc_id: str | None = None
    description: str = ""
    verdict_category: str = ""
    verdict_message: str = ""
    hint: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    duplicate_of: str | None = None
    duplicate_similarity: float | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    #: Unit-length embedding of the environment's text representation (``None`` until embedded).
    embedding: list[float] | None = None
    #: Per-iteration statistics, oldest first (filled by the memory from ``update_stats``).
    history: list[EnvIteration] = field(default_factory=list)
    #: How often the designer proposed this exact program (same id).
    times_proposed: int = 1


@runtime_checkable
class EnvMemory(Protocol):
    """Durable store of environment records with similarity search.

    Optional members callers look up with ``getattr``: ``find_duplicates(programs)`` (the same
    answers as ``find_duplicate`` for many programs at once, e.g. one embedding batch; the loop's
    dedupe uses it) and ``records()`` (every record, e.g. to read a run's memory as a fixed pool).
    """

    def find_duplicate(self, program: EnvProgram) -> tuple[EnvRecord, float] | None:
        """The nearest mastered environment if it is too similar to ``program``, else ``None``."""
        ...

    def add(self, record: EnvRecord) -> None: ...

    def update_stats(
        self, env_id: str, iteration: int, hinted: Sequence[float], unhinted: Sequence[float],
        figures: dict[str, float], designer_reward: float,
    ) -> EnvRecord:
        """Record one iteration's play of an environment; returns the record with its new status."""
        ...

    def get(self, env_id: str) -> EnvRecord | None: ...

    def frontier_examples(self, k: int, family: str | None = None) -> list[EnvRecord]: ...

    def negative_examples(self, k: int, family: str | None = None) -> list[EnvRecord]: ...

    def close(self) -> None: ...
