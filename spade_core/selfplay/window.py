"""Regeneration windows (``loop.schedule: window``), as the reference trains.

A window starts every ``loop.regeneration_interval`` iterations: a fresh set of environments is
designed (or drawn from a fixed pool), hinted and played, then played again, unhinted, in every
later iteration of the window, and retired when the next window starts. The designer's samples of
a window are held meanwhile, with the log-probabilities the policy gave them when they were
generated; at the next window's start they are rewarded by the estimator over every play of their
window (:class:`~spade_core.interfaces.EstimateInput` ``window``) and trained, their staleness
corrected by truncated importance sampling in the trainer. The last window's samples are never
trained (no later window starts), as in the reference's recipes: its end-of-run flush runs only
at a rollout that regenerates, and no recipe's final rollout does (docs/reference.md).

The plays themselves live in the environment memory (one history entry per iteration), so the
window's own state is small: its start, its environment ids and the held samples. It goes into
every checkpoint, so a run resumed in the middle of a window continues it exactly. The schedule
that runs the windows is :class:`~spade_core.selfplay.schedule.WindowSchedule`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from spade_core.interfaces import EnvIteration


@dataclass
class HeldDesign:
    """One designer sample waiting for its window's plays."""

    env_id: str
    family_name: str
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


def window_start(iteration: int, interval: int) -> bool:
    """Whether ``iteration`` (0-based) starts a window."""
    return iteration % interval == 0


def window_timeouts(plays: list[EnvIteration], start: int, timeouts: str = "start") -> int:
    """The timeouts that mark a design (``loop.timeouts``): ``start`` (the reference, which
    stamps a design only at its regeneration step) counts those of the window's first iteration
    only; ``window`` those of every iteration of the window."""
    counted = [h for h in plays if timeouts == "window" or h.iteration == start]
    return int(sum(h.figures.get("step_timeouts", 0.0) for h in counted))
