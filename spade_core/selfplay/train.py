"""Step: train. One update of the policy on the iteration's samples (the configured trainer;
``trainer: none`` changes nothing), timed as the ``train`` phase."""

from __future__ import annotations

from typing import Any

from spade_core.interfaces import Trainer, TrainingSample
from spade_core.phases import PhaseTimer


def train(trainer: Trainer, samples: list[TrainingSample], timer: PhaseTimer) -> dict[str, Any]:
    """The trainer's update on ``samples``; its figures (``{}`` when it reports none)."""
    with timer.phase("train", total=len(samples)):
        figures = trainer.train(samples) or {}
        timer.advance("train", len(samples))
    return figures
