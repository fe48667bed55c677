"""Corpus samplers: where the designer's grounding documents come from."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from spade_core.records import Document


class CorpusSampler(ABC):
    """Yields grounding documents, seeded and resumable.

    ``state_dict()`` must capture everything needed so that ``load_state_dict()`` on a fresh sampler
    built from the same options continues the exact same sequence (checkpoint and resume).
    """

    @abstractmethod
    def sample(self, n: int) -> list[Document]:
        """Return the next ``n`` documents (already truncated to the configured length)."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable position of the sampler (written into every checkpoint)."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from a position ``state_dict()`` returned."""

    def close(self) -> None:
        """Release files or connections; the default has none."""
