"""Trainers: update the policy from both roles' samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable


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


@runtime_checkable
class Trainer(Protocol):
    """Consumes rewarded samples and updates the model the generation backend uses."""

    def train(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
        """One update; returns metrics to log (loss, mean reward per role, ...)."""
        ...

    def save(self, directory: Path) -> None: ...

    def load(self, directory: Path) -> None: ...
