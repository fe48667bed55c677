"""Corpus samplers: where the designer's grounding documents come from."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from spade_core.records import Document


@runtime_checkable
class CorpusSampler(Protocol):
    """Yields grounding documents, seeded and resumable.

    ``state_dict()`` must capture everything needed so that ``load_state_dict()`` on a fresh sampler
    built from the same options continues the exact same sequence (checkpoint and resume).
    """

    def sample(self, n: int) -> list[Document]:
        """Return the next ``n`` documents (already truncated to the configured length)."""
        ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...
