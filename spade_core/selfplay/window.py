"""Regeneration windows (``loop.schedule: window``), as the reference trains.

A window starts every ``loop.regeneration_interval`` iterations: a fresh set of environments is
designed (or drawn from a fixed pool), hinted and played, then played again, unhinted, in every
later iteration of the window, and retired when the next window starts. The designer's samples of
a window are held meanwhile, with the log-probabilities the policy gave them when they were
generated; at the next window's start they are rewarded by the estimator over every play of their
window (:class:`~spade_core.interfaces.EstimateInput` ``window``) and trained, their staleness
corrected by truncated importance sampling in the trainer. The last window's samples are never
trained (no later window starts; the reference flushes them at its final rollout).

The plays themselves live in the environment memory (one history entry per iteration), so the
window's own state is small: its start, its environment ids and the held samples. It goes into
every checkpoint, so a run resumed in the middle of a window continues it exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from spade_core.interfaces import (
    DifficultyEstimator,
    EnvIteration,
    EnvMemory,
    EnvRecord,
    EstimateInput,
    TrainingSample,
)
from spade_core.records import EnvProgram, Role
from spade_core.selfplay.iteration import checked_estimate, skill_window_means


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


def window_timeouts(plays: list[EnvIteration], start: int, timeouts: str = "start") -> int:
    """The timeouts that mark a design (``loop.timeouts``): ``start`` (the reference, which
    stamps a design only at its regeneration step) counts those of the window's first iteration
    only; ``window`` those of every iteration of the window."""
    counted = [h for h in plays if timeouts == "window" or h.iteration == start]
    return int(sum(h.figures.get("step_timeouts", 0.0) for h in counted))


def delayed_reward(estimator: DifficultyEstimator, design: HeldDesign, record: EnvRecord | None,
                   window: Window, success_threshold: float,
                   label: str = "", timeouts: str = "start",
                   skill_means: Sequence[float] = ()) -> tuple[float, dict]:
    """A held design's reward over its window's plays (``record``: its environment's memory
    record, with one history entry per iteration played): the estimator sees the hinted plays
    of the window's start, the unhinted plays played alongside them, and every iteration of the
    window; ``timeouts`` (``loop.timeouts``) says which timeouts count (:func:`window_timeouts`);
    ``skill_means``: the design's skill's mean per window (``iteration.skill_window_means``). A design
    whose environment was never played gets 0."""
    if design.fixed_reward is not None:
        return design.fixed_reward, {}
    plays = [h for h in record.history if h.iteration >= window.start] if record else []
    if not plays:
        return 0.0, {}
    first = plays[0]
    difficulty = checked_estimate(estimator, EstimateInput(
        env=EnvProgram(source=record.source, family=design.family, doc_id=record.doc_id),
        hinted=first.hinted, unhinted=first.unhinted, iteration=plays[-1].iteration,
        history=[h for h in record.history if h.iteration < window.start],
        success_threshold=success_threshold, window=plays,
        step_timeouts=window_timeouts(plays, window.start, timeouts),
        skill_means=skill_means), label)
    return float(difficulty.designer_reward), dict(difficulty.figures)


@dataclass
class Delayed:
    """One played design's delayed reward, as released: what ``envs/<id>.json`` (``delayed``)
    and the memory's history (``delayed_*`` figures of the window's first entry) keep."""

    env_id: str
    window_start: int
    designer_reward: float
    figures: dict[str, float]
    #: Whether the designer was trained on it (``False``: the estimator masked it).
    trained: bool

    def as_figures(self) -> dict[str, float]:
        """The memory's form: ``delayed_designer_reward``, ``delayed_trained`` and every figure
        as ``delayed_<name>``."""
        return ({"delayed_designer_reward": self.designer_reward,
                 "delayed_trained": float(self.trained)}
                | {f"delayed_{k}": float(v) for k, v in self.figures.items()})


def release(estimator: DifficultyEstimator, memory: EnvMemory, window: Window,
            success_threshold: float, label: str = "", timeouts: str = "start",
            interval: int = 1) -> tuple[list[TrainingSample], list[Delayed]]:
    """The window's designer samples, each rewarded over the window (see
    :func:`delayed_reward`; ``interval``: the regeneration interval, for per-skill means);
    ``meta`` keeps the generation-time log-probs for the trainer and the delayed reward's figures
    (``window_figures``). A design the estimator masks (figure ``masked`` 1: the reference's
    negative blend, ``proposer_masked``) is not trained. Every played design's delayed reward is
    returned too, and added to its window's first history entry in the memory
    (:meth:`~spade_core.interfaces.EnvMemory.add_figures`)."""
    means = (skill_window_means(memory.records(), interval, window.start // interval)
             if estimator.uses_skill_means else {})
    samples, delayed = [], []
    for design in window.designs:
        record = memory.get(design.env_id)
        reward, figures = delayed_reward(estimator, design, record, window,
                                         success_threshold, label, timeouts,
                                         means.get(design.skill, ()))
        masked = bool(figures.get("masked"))
        if design.fixed_reward is None and record is not None:
            delayed.append(Delayed(design.env_id, window.start, reward, figures, not masked))
            memory.add_figures(design.env_id, window.start, delayed[-1].as_figures())
        if masked:
            continue
        meta = dict(design.meta) | {"skill": design.skill, "window_start": window.start,
                                    "rollout_logps": design.rollout_logps,
                                    "window_figures": figures}
        samples.append(TrainingSample(role=Role.DESIGNER, messages=design.messages,
                                      reward=reward, group=design.env_id, meta=meta))
    return samples, delayed
