"""Difficulty estimators: turn hinted and unhinted rewards into difficulty and a designer reward.

Two calls, one contract (``docs/estimators.md``, "The estimator interface"):

- version 1, ``estimate(env, hinted, unhinted)``: this iteration's episode rewards only;
- version 2 (:data:`ESTIMATOR_INTERFACE_VERSION`), ``estimate_with_history(data)``: an
  :class:`EstimateInput` that also carries the iteration, the environment's earlier iterations
  and the run's success threshold.

The loop calls ``estimate_with_history``; an estimator implements either method (or both) and the
base class derives the other, so estimators written against version 1 keep working unchanged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from spade_core.records import Difficulty, EnvIteration, EnvProgram

__all__ = ["ESTIMATOR_INTERFACE_VERSION", "DifficultyEstimator", "EstimateInput"]

#: Version of what the loop hands an estimator. 1: ``estimate(env, hinted, unhinted)``;
#: 2: ``estimate_with_history(EstimateInput)``. Within a version fields are only ever added, at
#: the end and with a default; anything else gets a new version.
ESTIMATOR_INTERFACE_VERSION = 2


@dataclass(frozen=True)
class EstimateInput:
    """Everything the loop knows about one environment's play when it asks for its difficulty.

    ``hinted`` and ``unhinted`` are this iteration's per-episode rewards on the same seeds (each in
    [-1, 1]). ``history`` holds the environment's earlier iterations as the memory recorded them
    (:class:`~spade_core.interfaces.memory.EnvIteration`: raw rewards, figures, designer reward),
    oldest first, this one excluded; it is empty on an environment's first play. The entries are
    copies, so an estimator cannot change the memory's records through them.
    """

    env: EnvProgram
    hinted: Sequence[float]
    unhinted: Sequence[float]
    #: The loop iteration being estimated (0 when called through the version 1 ``estimate``).
    iteration: int = 0
    history: Sequence[EnvIteration] = ()
    #: Episode reward that counts as a success (``loop.success_threshold``; 1.0 when called
    #: through the version 1 ``estimate``, which carries no threshold).
    success_threshold: float = 1.0
    #: The interface version this input follows (:data:`ESTIMATOR_INTERFACE_VERSION`).
    version: int = field(default=ESTIMATOR_INTERFACE_VERSION, init=False)
    #: A delayed designer reward over a regeneration window (``loop.schedule: window``): every
    #: iteration of the window, oldest first, with its unhinted rewards (and, for the first, the
    #: hinted ones). Then ``hinted`` holds the window's hinted rewards (played at its start) and
    #: ``unhinted`` the unhinted rewards of the window's first iteration, played alongside them
    #: (the reference's "matched timing" for regret). Empty for an immediate estimate.
    window: Sequence[EnvIteration] = ()
    #: Episodes (of this iteration, or of the window for a delayed reward) in which one of the
    #: environment's own calls ran out of time.
    step_timeouts: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "hinted", tuple(float(r) for r in self.hinted))
        object.__setattr__(self, "unhinted", tuple(float(r) for r in self.unhinted))
        for name in ("history", "window"):
            object.__setattr__(self, name, tuple(
                replace(h, hinted=list(h.hinted), unhinted=list(h.unhinted),
                        figures=dict(h.figures))
                for h in getattr(self, name)))

    @property
    def pooled_unhinted(self) -> tuple[float, ...]:
        """Every unhinted reward of the window (``unhinted`` when there is no window)."""
        if not self.window:
            return self.unhinted
        return tuple(float(r) for h in self.window for r in h.unhinted)


class DifficultyEstimator(ABC):
    """Scores one environment from the agent's episode rewards on it.

    Implement :meth:`estimate` (version 1: this iteration's rewards), or
    :meth:`estimate_with_history` (version 2: also the environment's earlier iterations), or both.
    A subclass that defines only ``estimate_with_history`` gets ``estimate`` derived from it (its
    estimate with no history); one that defines neither cannot be instantiated.

    The returned :class:`Difficulty` must fill ``regret`` (mean hinted minus mean unhinted reward:
    the loop's metrics, the memory and the designer's examples rank by it), the designer's reward,
    and any further figures to log.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Runs before ABCMeta collects the abstract methods, so a derived ``estimate`` counts.
        if "estimate_with_history" in vars(cls) and "estimate" not in vars(cls) \
                and getattr(cls.estimate, "__isabstractmethod__", False):
            cls.estimate = _estimate_without_history  # type: ignore[method-assign]

    @abstractmethod
    def estimate(
        self, env: EnvProgram, hinted: Sequence[float], unhinted: Sequence[float]
    ) -> Difficulty:
        """Difficulty of ``env`` from this iteration's episode rewards (interface version 1)."""

    def estimate_with_history(self, data: EstimateInput) -> Difficulty:
        """Difficulty of ``data.env`` knowing its earlier iterations (interface version 2; the
        loop calls this). The default ignores the history: ``estimate(env, hinted, unhinted)``,
        with every unhinted reward of the window for a delayed reward
        (:attr:`EstimateInput.pooled_unhinted`)."""
        return self.estimate(data.env, data.hinted, data.pooled_unhinted)

    def close(self) -> None:
        """Release resources; the default has none."""


def _estimate_without_history(self: DifficultyEstimator, env: EnvProgram,
                              hinted: Sequence[float], unhinted: Sequence[float]) -> Difficulty:
    """Difficulty of ``env`` from this iteration's episode rewards alone: the estimator's
    :meth:`~DifficultyEstimator.estimate_with_history` with an empty history (a first play)."""
    return self.estimate_with_history(EstimateInput(env=env, hinted=hinted, unhinted=unhinted))
