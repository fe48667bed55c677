"""Difficulty estimators: turn hinted and unhinted rewards into difficulty and a designer reward.

One call (``docs/estimators.md``, "The estimator interface"): ``estimate(data)`` with an
:class:`EstimateInput`, which carries this iteration's rewards, the iteration, the environment's
earlier iterations, the run's success threshold and, for a delayed reward, its window. The input
is versioned (:data:`ESTIMATOR_INTERFACE_VERSION`) so that an estimator can tell what it was given.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from statistics import fmean

from spade_core.records import Difficulty, EnvIteration, EnvProgram

__all__ = ["ESTIMATOR_INTERFACE_VERSION", "DifficultyEstimator", "EstimateInput"]

#: Version of what the loop hands an estimator (:class:`EstimateInput`). Within a version fields
#: are only ever added, at the end and with a default; anything else gets a new version.
ESTIMATOR_INTERFACE_VERSION = 1


def _mean(values: Sequence[float]) -> float:
    """The mean reward, 0 for no rewards."""
    return fmean(values) if values else 0.0


@dataclass(frozen=True)
class EstimateInput:
    """Everything the loop knows about one environment's play when it asks for its difficulty.

    ``hinted`` and ``unhinted`` are per-episode rewards on the same seeds (each in [-1, 1]):
    this iteration's, except that in the later iterations of a regeneration window, which play
    no hinted episode, ``hinted`` holds the window start's hinted rewards. ``history`` holds the
    environment's earlier iterations as the memory recorded them
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
    #: (the reference's "matched timing" for the blend's regret term). Empty for an immediate
    #: estimate.
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
    def regret(self) -> float:
        """Mean ``hinted`` minus mean unhinted reward, the unhinted rewards being
        :attr:`pooled_unhinted` (every one of a window; this iteration's otherwise) and the mean
        of no rewards 0. The loop sets every estimate's :attr:`Difficulty.regret
        <spade_core.records.Difficulty.regret>` to it (``blend``'s regret term reads the first
        iteration's instead, "matched timing": its figure ``matched_regret``)."""
        return _mean(self.hinted) - _mean(self.pooled_unhinted)

    @property
    def pooled_unhinted(self) -> tuple[float, ...]:
        """Every unhinted reward of the window (``unhinted`` when there is no window)."""
        if not self.window:
            return self.unhinted
        return tuple(float(r) for h in self.window for r in h.unhinted)


class DifficultyEstimator(ABC):
    """Scores one environment from the agent's episode rewards on it.

    Implement :meth:`estimate`. What it must return: a :class:`Difficulty` whose
    ``designer_reward`` is a finite number (what the designer is trained on) and whose
    ``figures`` map names to finite numbers (anything further to log: they go to the memory's
    history and the run files). What it may return: ``train=False``, for a design the designer
    must not be trained on (masked, e.g. the reference's negative blend; the design still counts
    in the designer's advantage scale, and its reward is logged). What it leaves out:
    ``regret``, which the loop sets from the input (:attr:`EstimateInput.regret`), so that every
    estimator's regret means the same. Which rewards the designer reward reads is the
    estimator's choice: ``data.unhinted`` (this iteration's; over a window, its first
    iteration's) or ``data.pooled_unhinted`` (every unhinted reward of the window), the history,
    the window's iterations. An estimate that raises, is no :class:`Difficulty`, sets
    ``regret`` or whose designer reward is not a finite number stops the run with a plugin error
    naming the estimator (``spade_core.testing.check_component`` checks the figures too).
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
        uses them, its earlier iterations and its regeneration window):
        ``Difficulty(figures, designer_reward)``, ``train=False`` to keep the design out of
        training, ``regret`` left to the loop."""

    def close(self) -> None:
        """Release resources; the default has none."""


def contract_problem(difficulty: object) -> str:
    """What breaks the estimator contract in ``difficulty`` (``""``: nothing); its figures are
    checked by ``spade_core.testing.check_component``, not in the run (the loop refuses an
    estimate with a problem: ``spade_core.selfplay.difficulty.checked_estimate``)."""
    if not isinstance(difficulty, Difficulty):
        return f"a {type(difficulty).__name__}, not a Difficulty"
    if difficulty.regret is not None:
        return f"regret={difficulty.regret!r}: regret is set by the loop"
    if not isinstance(difficulty.train, bool):
        return f"train={difficulty.train!r}, not True or False"
    reward = difficulty.designer_reward
    if not (isinstance(reward, (int, float)) and not isinstance(reward, bool)
            and math.isfinite(reward)):
        return f"designer_reward={reward!r}, not a finite number"
    return ""
