"""Difficulty estimators: turn hinted and unhinted rewards into difficulty and a designer reward.

One call (``docs/estimators.md``, "The estimator interface"): ``estimate(data)`` with an
:class:`EstimateInput`, which carries this iteration's rewards, the iteration, the environment's
earlier iterations, the run's success threshold and, for a delayed reward, its window. The input
is versioned (:data:`ESTIMATOR_INTERFACE_VERSION`) so that an estimator can tell what it was given.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from spade_core.records import Difficulty, EnvIteration, EnvProgram

__all__ = ["ESTIMATOR_INTERFACE_VERSION", "DifficultyEstimator", "EstimateInput"]

#: Version of what the loop hands an estimator (:class:`EstimateInput`). Within a version fields
#: are only ever added, at the end and with a default; anything else gets a new version.
ESTIMATOR_INTERFACE_VERSION = 1


@dataclass(frozen=True)
class EstimateInput:
    """Everything the loop knows about one environment's play when it asks for its difficulty.

    ``hinted`` and ``unhinted`` are per-episode rewards on the same seeds (each in [-1, 1]):
    this iteration's, except that in the later iterations of a regeneration window, which play
    no hinted episode, ``hinted`` holds the window start's hinted rewards. ``history`` holds the environment's earlier iterations as the memory recorded them
    (:class:`~spade_core.interfaces.memory.EnvIteration`: raw rewards, figures, designer reward),
    oldest first, this one excluded; it is empty on an environment's first play. The entries are
    copies, so an estimator cannot change the memory's records through them.
    """

    env: EnvProgram
    hinted: Sequence[float]
    unhinted: Sequence[float]
    #: The loop iteration being estimated.
    iteration: int = 0
    history: Sequence[EnvIteration] = ()
    #: Episode reward that counts as a success (``loop.success_threshold``).
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
    #: The environment's skill's (else family's) mean unhinted reward per regeneration window
    #: (per iteration in the frontier schedule), every play of the skill's environments pooled,
    #: oldest first, this window (or iteration) last: what the reference's per-skill learning-
    #: potential trackers are updated with. Filled only for an estimator whose
    #: ``uses_skill_means`` is true (reading it scans the memory); empty otherwise.
    skill_means: Sequence[float] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "hinted", tuple(float(r) for r in self.hinted))
        object.__setattr__(self, "skill_means", tuple(float(r) for r in self.skill_means))
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

    Implement :meth:`estimate`. The returned :class:`Difficulty` must fill ``regret`` (mean
    hinted minus mean unhinted reward: the loop's metrics, the memory and the designer's examples
    rank by it), the designer's reward, and any further figures to log. An estimator that does
    not use the history or the window reads ``data.hinted`` and ``data.pooled_unhinted`` (every
    unhinted reward of a delayed reward's window; this iteration's otherwise).
    """

    #: Members of earlier versions of this interface: a component that still defines one is
    #: refused when it is built (``spade_core.components.Component.build``).
    _retired_members = ("estimate_with_history",)
    #: What changed, for that refusal's message, by member.
    _interface_changes = {
        "estimate": "estimate(env, hinted, unhinted) and estimate_with_history(env, hinted, "
                    "unhinted, history) became one estimate(data: EstimateInput), which carries "
                    "the rewards, the history, the threshold and the window (estimator interface "
                    f"version {ESTIMATOR_INTERFACE_VERSION})",
    }
    _interface_changes["estimate_with_history"] = _interface_changes["estimate"]
    #: Where the documentation describes this interface beside docs/plugins.md.
    _guide = 'docs/estimators.md, "The estimator interface"'
    #: Whether :meth:`estimate` reads ``EstimateInput.skill_means`` (the loop fills it only then).
    uses_skill_means: bool = False

    @abstractmethod
    def estimate(self, data: EstimateInput) -> Difficulty:
        """Difficulty of ``data.env`` from its rewards this iteration (and, where the estimator
        uses them, its earlier iterations and its regeneration window)."""

    def close(self) -> None:
        """Release resources; the default has none."""
