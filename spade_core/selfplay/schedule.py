"""The run's schedule (``loop.schedule``), one object chosen at set-up (:func:`open_schedule`):
everything that differs between the two, so that the iteration (:mod:`iteration`) has no branch
on it. docs/training.md, "Schedules and what is trained".

- **frontier**: every iteration designs (or draws) a fresh set, replays the memory's frontier
  beside it, trains the designer on each design's immediate reward, and retires environments
  played too long.
- **window** (the reference): a fresh set every ``loop.regeneration_interval`` iterations,
  played again, unhinted, in the window's later iterations; its designs are held and rewarded
  over the whole window when the next window starts (:mod:`window`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from spade_core.config.schema import LoopSection
from spade_core.interfaces import EnvRecord, Trainer, TrainingSample
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.designer_reward import (
    Delayed,
    hold_designs,
    immediate_designs,
    release,
    scale_designer,
)
from spade_core.selfplay.environments import window_replays
from spade_core.selfplay.metrics import window_metrics
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.remember import retire_aged
from spade_core.selfplay.samples import agent_samples
from spade_core.selfplay.window import Window, window_start

#: What asynchronous training hands over: the backend's record of what it generated.
Ledger = Callable[[], dict[str, Any]]


class Schedule(ABC):
    """When an iteration starts a fresh set of environments, and what it trains."""

    #: Iterations one set of environments is played for (1: every iteration starts one).
    interval: int = 1

    @abstractmethod
    def starts(self, iteration: int) -> bool:
        """Whether ``iteration`` designs (or draws) a fresh set, with hinted plays."""

    def release(self, c: Components, loop: LoopSection, fresh: bool
                ) -> tuple[list[TrainingSample], list[Delayed]]:
        """Step: release. Designs of an earlier set rewarded now over its plays (none here)."""
        return [], []

    def again(self, c: Components, loop: LoopSection) -> list[Proposal]:
        """The environments an iteration that starts no set plays again (none here)."""
        return []

    def replays(self, loop: LoopSection) -> int:
        """Frontier environments of the memory replayed beside a fresh set (none here)."""
        return 0

    def retire(self, c: Components, loop: LoopSection,
               proposals: list[Proposal]) -> list[EnvRecord]:
        """Environments that leave the frontier after this iteration's plays (none here)."""
        return []

    @abstractmethod
    def samples(self, trainer: Trainer, loop: LoopSection, iteration: int,
                proposals: list[Proposal], fresh: bool, released: list[TrainingSample],
                delayed: list[Delayed], ledger: Ledger | None = None) -> list[TrainingSample]:
        """Step: samples. What the trainer gets this iteration: the agent's plays and the
        designer's samples, their advantages scaled (:func:`scale_designer`)."""

    def row(self, iteration: int, released: list[TrainingSample]) -> dict[str, Any] | None:
        """The metrics row's part for the schedule (``None``: none)."""
        return None

    def state_dict(self) -> dict[str, Any] | None:
        """What a checkpoint keeps of the schedule (``None``: nothing)."""
        return None

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        """Back to a checkpoint's :meth:`state_dict`."""


class FrontierSchedule(Schedule):
    """A fresh set every iteration, the memory's frontier replayed beside it; the designer is
    trained on each design's immediate reward."""

    def starts(self, iteration: int) -> bool:
        return True

    def replays(self, loop: LoopSection) -> int:
        return loop.replay_envs

    def retire(self, c: Components, loop: LoopSection,
               proposals: list[Proposal]) -> list[EnvRecord]:
        return retire_aged(c, loop, proposals)

    def samples(self, trainer: Trainer, loop: LoopSection, iteration: int,
                proposals: list[Proposal], fresh: bool, released: list[TrainingSample],
                delayed: list[Delayed], ledger: Ledger | None = None) -> list[TrainingSample]:
        """This iteration's designs (:func:`immediate_designs`, the masked ones counted) and
        plays."""
        designs, masked = immediate_designs(loop, proposals)
        return scale_designer(loop, designs + agent_samples(loop, proposals), masked=masked)


class WindowSchedule(Schedule):
    """Regeneration windows of ``interval`` iterations, as the reference trains; ``current``:
    the window in progress (``None`` before the first)."""

    def __init__(self, interval: int, current: Window | None = None) -> None:
        self.interval, self.current = interval, current

    def starts(self, iteration: int) -> bool:
        """A window's first iteration, or the first iteration run without one (e.g. after a
        schedule change)."""
        return self.current is None or window_start(iteration, self.interval)

    def release(self, c: Components, loop: LoopSection, fresh: bool
                ) -> tuple[list[TrainingSample], list[Delayed]]:
        """At a window's start, the last window's designs rewarded over its plays
        (:func:`~spade_core.selfplay.designer_reward.release`)."""
        if not fresh or self.current is None:
            return [], []
        return release(c.estimator, c.memory, self.current, loop.success_threshold,
                       c.estimator_label, loop.timeouts, self.interval)

    def again(self, c: Components, loop: LoopSection) -> list[Proposal]:
        """The window's environments, from the memory (``loop.timeouts: start``: those whose
        code timed out earlier in the window are not played again)."""
        return window_replays(c, self.current.env_ids, self.current.start,
                              drop_timed_out=loop.timeouts == "start")

    def samples(self, trainer: Trainer, loop: LoopSection, iteration: int,
                proposals: list[Proposal], fresh: bool, released: list[TrainingSample],
                delayed: list[Delayed], ledger: Ledger | None = None) -> list[TrainingSample]:
        """At a window's start its designs are held (``ledger``, asynchronous training: what
        the backend generated, for their log-probabilities); every iteration trains the agent's
        plays with the ``released`` designs of the window before (those ``delayed`` that the
        estimator masked count in the designer reward scale)."""
        if fresh:
            self.current = hold_designs(trainer, loop, iteration, proposals,
                                        ledger() if ledger is not None else None)
        return scale_designer(loop, released + agent_samples(loop, proposals), self.interval,
                              masked=sum(not d.trained for d in delayed))

    def row(self, iteration: int, released: list[TrainingSample]) -> dict[str, Any] | None:
        return window_metrics(self.current, iteration, released)

    def state_dict(self) -> dict[str, Any] | None:
        return self.current.to_dict() if self.current is not None else None

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        if state:
            self.current = Window.from_dict(state)


def open_schedule(loop: LoopSection) -> Schedule:
    """The schedule ``loop.schedule`` names."""
    if loop.schedule == "window":
        return WindowSchedule(loop.regeneration_interval)
    return FrontierSchedule()
