"""Difficulty estimators: turn hinted and unhinted rewards into difficulty and a designer reward."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from spade_core.records import Difficulty, EnvProgram


@runtime_checkable
class DifficultyEstimator(Protocol):
    """Scores one environment from the agent's episode rewards on it.

    ``hinted`` and ``unhinted`` are per-episode rewards on the same seeds (each in [-1, 1]). Return
    the figures to log (e.g. ``regret``, ``win_rate``) and the designer's reward.
    """

    def estimate(
        self, env: EnvProgram, hinted: Sequence[float], unhinted: Sequence[float]
    ) -> Difficulty: ...
