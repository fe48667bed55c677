"""Trainers: update the policy from both roles' samples."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TrainingSample:
    """One rewarded sample. ``role`` is ``"agent"`` or ``"designer"``.

    ``messages`` is the whole conversation; for a multi-turn agent trajectory the environment's
    turns are user messages and are masked out of the loss.
    """

    role: str
    messages: list[dict[str, str]]
    reward: float
    group: str = ""
    meta: dict[str, object] = field(default_factory=dict)


class Trainer(ABC):
    """Consumes rewarded samples and updates the model the generation backend uses."""

    @abstractmethod
    def train(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
        """One update; returns metrics to log (loss, mean reward per role, ...)."""

    def save(self, directory: Path) -> None:
        """Write what resuming needs (weights or adapter, optimizer) into ``directory``. The
        default writes nothing: a trainer without state (``none``) resumes from the config."""

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote. The default expects nothing."""

    def close(self) -> None:
        """Release resources; the default has none."""
