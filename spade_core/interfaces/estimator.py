"""Difficulty estimators: turn hinted and unhinted rewards into difficulty and a designer reward."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from spade_core.records import Difficulty, EnvProgram


class DifficultyEstimator(ABC):
    """Scores one environment from the agent's episode rewards on it.

    ``hinted`` and ``unhinted`` are per-episode rewards on the same seeds (each in [-1, 1]). The
    returned :class:`Difficulty` must fill ``regret`` (the loop's metrics, the memory and the
    designer's examples rank by it), the designer's reward, and any further figures to log.
    """

    @abstractmethod
    def estimate(
        self, env: EnvProgram, hinted: Sequence[float], unhinted: Sequence[float]
    ) -> Difficulty:
        """Difficulty of ``env`` from its episode rewards."""

    def close(self) -> None:
        """Release resources; the default has none."""
