"""Regeneration windows (``loop.schedule: window``), as the reference trains.

A window starts every ``loop.regeneration_interval`` iterations: a fresh set of environments is
designed (or drawn from a fixed pool), hinted and played, then played again, unhinted, in every
later iteration of the window, and retired when the next window starts. The designer's samples of
a window are held meanwhile, with the log-probabilities the policy gave them when they were
generated; at the next window's start they are rewarded by the estimator over every play of their
window (:class:`~spade_core.interfaces.EstimateInput` ``window``) and trained, their staleness
corrected by truncated importance sampling in the trainer. The last window's samples are never
trained (no later window starts), as in the reference.

The plays themselves live in the environment memory (one history entry per iteration), so the
window's own state is small: its start, its environment ids and the held samples. It goes into
every checkpoint, so a run resumed in the middle of a window continues it exactly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from spade_core.interfaces import (
    DifficultyEstimator,
    EnvMemory,
    EnvRecord,
    EstimateInput,
    TrainingSample,
)
from spade_core.records import EnvProgram, Role


@dataclass
class HeldDesign:
    """One designer sample waiting for its window's plays."""

    env_id: str
    family: str
    messages: list[dict[str, str]]
    skill: str
    #: Per-token log-probabilities of the completion when it was generated (``None``: the trainer
    #: records none; trained without importance correction).
    rollout_logps: list[float] | None = None
    #: A reward known when it was generated (a refused attempt, a duplicate); ``None``: rewarded
    #: over the window.
    fixed_reward: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Window:
    """The environments of the current window and its held designer samples."""

    start: int
    env_ids: list[str] = field(default_factory=list)
    designs: list[HeldDesign] = field(default_factory=list)

    def offset(self, iteration: int) -> int:
        return iteration - self.start

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "env_ids": list(self.env_ids),
                "designs": [asdict(d) for d in self.designs]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Window":
        return cls(start=int(data["start"]), env_ids=list(data["env_ids"]),
                   designs=[HeldDesign(**d) for d in data.get("designs", [])])


@dataclass
class Windows:
    """The run's window schedule: the interval and the window in progress."""

    interval: int
    current: Window | None = None

    def starts(self, iteration: int) -> bool:
        """Whether ``iteration`` designs a fresh set (a window's first iteration, or the first
        iteration run without one, e.g. after a schedule change)."""
        return self.current is None or window_start(iteration, self.interval)


def window_start(iteration: int, interval: int) -> bool:
    """Whether ``iteration`` (0-based) starts a window."""
    return iteration % interval == 0


def delayed_reward(estimator: DifficultyEstimator, design: HeldDesign, record: EnvRecord | None,
                   window: Window, success_threshold: float,
                   label: str = "") -> tuple[float, dict]:
    """A held design's reward over its window's plays (``record``: its environment's memory
    record, with one history entry per iteration played): the estimator sees the hinted plays
    of the window's start, the unhinted plays played alongside them, and every iteration of the
    window. A design whose environment was never played gets 0."""
    if design.fixed_reward is not None:
        return design.fixed_reward, {}
    plays = [h for h in record.history if h.iteration >= window.start] if record else []
    if not plays:
        return 0.0, {}
    first = plays[0]
    from spade_core.selfplay.iteration import checked_estimate

    difficulty = checked_estimate(estimator, EstimateInput(
        env=EnvProgram(source=record.source, family=design.family, doc_id=record.doc_id),
        hinted=first.hinted, unhinted=first.unhinted, iteration=plays[-1].iteration,
        history=[h for h in record.history if h.iteration < window.start],
        success_threshold=success_threshold, window=plays,
        step_timeouts=int(sum(h.figures.get("step_timeouts", 0.0) for h in plays))), label)
    return float(difficulty.designer_reward), dict(difficulty.figures)


def release(estimator: DifficultyEstimator, memory: EnvMemory, window: Window,
            success_threshold: float, label: str = "") -> list[TrainingSample]:
    """The window's designer samples, each rewarded over the window (see
    :func:`delayed_reward`); ``meta`` keeps the generation-time log-probs for the trainer."""
    samples = []
    for design in window.designs:
        reward, figures = delayed_reward(estimator, design, memory.get(design.env_id), window,
                                         success_threshold, label)
        meta = dict(design.meta) | {"skill": design.skill, "window_start": window.start,
                                    "rollout_logps": design.rollout_logps,
                                    "window_figures": figures}
        samples.append(TrainingSample(role=Role.DESIGNER, messages=design.messages,
                                      reward=reward, group=design.env_id, meta=meta))
    return samples
