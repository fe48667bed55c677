"""Call limits by the worker's CPU time, with the wall clock only a backstop against hangs.

A call's limit (``load_seconds``, ``reset_seconds``, ``step_seconds``, what is left of
``episode_seconds``, the 1 s of ``close()``) counts the CPU time the worker spends on it, so a
valid program's verdict does not depend on how busy the machine is. The worker reports its CPU
time (``time.process_time``) in every reply and progress marker, so the host knows where each
call began on that clock. A one-thread worker's CPU time never runs faster than the wall clock,
so the limit cannot have been reached before ``limit`` wall seconds have passed: only then does
the host ask the fork server for the worker's CPU time now (read by the server, not reported by
the worker), and while the call has used less than its limit it waits for the rest, checking
again when the rest could at the earliest be used up. It ends the worker as soon as the limit is
reached (C code included: the server kills it), or at ``wall_factor`` times the limit of wall
time, the backstop against a call that waits without computing.

A worker that lied about its CPU time could only move where its own calls begin within the
backstop: the time used is always measured by the server. A channel that cannot tell the
worker's CPU time (no ``cpu_seconds``, as the tests' fakes) keeps wall-clock limits.
"""

from __future__ import annotations

import math
import time
from typing import Any

from sandbox.protocol import FrameError

#: A call this close (CPU seconds) to its limit counts as having reached it, so the checks
#: near the limit stop after a few rounds instead of halving the rest forever.
CPU_EPSILON = 0.01
#: Wall seconds before the host asks again when the worker's CPU time could not be read (its
#: fork server was busy importing a family's libraries, say); the backstop still bounds it.
RETRY_SECONDS = 0.5


def reported_cpu(reply: dict[str, Any]) -> float | None:
    """The worker's CPU seconds a reply carries (``"c"``), if it is a plausible number."""
    cpu = reply.get("c")
    if type(cpu) is float or type(cpu) is int:  # never a bool, never a str
        if 0 <= cpu < math.inf:
            return float(cpu)
    return None


def first_deadline(begun: float, limit: float, factor: float, wall_left: float) -> float:
    """A single call's first deadline: what :meth:`CallClock.deadline` would say before any
    check (single calls build their clock only if they reach it, so one that ends in time
    costs no clock). Comparisons rather than ``min``/``max``: this runs on every call."""
    wall = factor * limit
    if wall_left < wall:
        wall = wall_left if wall_left > 0 else 0.0
    return begun + (limit if limit < wall else wall)


def charged(cpu_start: float, cpu_end: float | None, wall: float) -> float:
    """What a finished call costs its episode budget: the CPU time between where it began and
    where its reply says it ended (never negative, never more than the wall time it took), or
    its wall time when the reply carries no CPU time."""
    if cpu_end is None:
        return wall
    spent = cpu_end - cpu_start
    return 0.0 if spent < 0 else spent if spent < wall else wall


class CallClock:
    """When the host gives up on one request to a worker.

    ``limit`` CPU seconds in all since the request (``cpu_start`` is the worker's CPU time when
    it began); with ``stage``, also at most ``stage`` CPU seconds since the request or the
    worker's last progress marker (requests that run several calls). The wall-clock backstop is
    ``factor`` times each of those, and at most ``wall_left`` after the request (what is left of
    the episode's wall backstop).
    """

    __slots__ = ("channel", "begun", "cpu_start", "limit", "stage", "factor", "wall_limit",
                 "_read", "_checked", "_retry", "ended_by")

    def __init__(self, channel: Any, cpu_start: float, limit: float, factor: float,
                 stage: float | None = None, wall_left: float = math.inf,
                 begun: float | None = None) -> None:
        self.channel = channel
        self.begun = time.monotonic() if begun is None else begun
        self.cpu_start = cpu_start
        self.limit = limit
        self.stage = stage
        self.factor = factor
        self.wall_limit = max(0.0, min(factor * limit, wall_left))
        self._read = getattr(channel, "cpu_seconds", None)
        #: The latest (wall, CPU) point the host knows of, from a check of the CPU time.
        self._checked: tuple[float, float] | None = None
        #: No check before this (monotonic) after a check that could not read the CPU time.
        self._retry = 0.0
        #: What ended the wait: ``limit`` (the CPU limit in all), ``stage`` (the CPU limit
        #: since the last marker) or ``backstop`` (the wall clock); empty while it goes on.
        self.ended_by = ""

    @property
    def by_cpu(self) -> bool:
        """Whether the limits count CPU time (the channel can tell it) or the wall clock."""
        return self._read is not None

    def _stage_start(self) -> tuple[float, float]:
        """Wall and CPU time where the current stage began: the request, or the last marker."""
        marked = getattr(self.channel, "marked", None)
        if self.stage is None or marked is None or marked < self.begun:
            return self.begun, self.cpu_start
        cpu = getattr(self.channel, "marked_cpu", None)
        return marked, self.cpu_start if cpu is None else max(cpu, self.cpu_start)

    def backstop(self) -> float:
        """The wall-clock time (monotonic) past which the host waits no longer."""
        end = self.begun + self.wall_limit
        if self.stage is not None:
            end = min(end, self._stage_start()[0] + self.factor * self.stage)
        return end

    def deadline(self) -> float:
        """The next wall-clock time (monotonic) at which the host must look again: the earliest
        moment the CPU limit could be reached, or the backstop."""
        if self.stage is None and self._checked is None and not self._retry:  # not checked yet
            return self.begun + min(self.limit, self.wall_limit)
        stage_wall, stage_cpu = self._stage_start()
        if not self.by_cpu:  # the wall clock decides, as the limits did before issue 48
            end = self.begun + self.limit
            if self.stage is not None:
                end = min(end, stage_wall + self.stage)
            return min(end, self.begun + self.wall_limit)
        checked = self._checked
        wall, cpu = checked if checked is not None and checked[0] >= stage_wall \
            else (stage_wall, stage_cpu)
        at = wall + self.limit - (cpu - self.cpu_start)
        if self.stage is not None:
            at = min(at, wall + self.stage - (cpu - stage_cpu))
        return min(max(at, self._retry), self.backstop())

    def expired(self, now: float) -> FrameError | None:
        """Called once ``now`` has reached :meth:`deadline`: the timeout to end the worker with,
        or ``None`` while the call has CPU time left (the deadline has then moved on)."""
        if now < self.deadline():
            return None
        if not self.by_cpu:  # no CPU time to go by: the clock decides
            stage_wall = self._stage_start()[0]
            self.ended_by = "stage" if self.stage is not None \
                and stage_wall + self.stage < self.begun + self.limit else "limit"
            return FrameError("no reply before the time limit", "timeout")
        cpu = self._read()
        if cpu is None:
            if now < self.backstop():
                # Not read this time (a busy fork server; a worker that is gone closes its
                # channel, which ends the wait anyway): ask again, within the backstop.
                self._retry = now + RETRY_SECONDS
                return None
            self.ended_by = "backstop"
            return FrameError("no reply before the wall-clock backstop", "timeout",
                              f"the wall-clock backstop, {self.factor:g} times the limit, "
                              "passed (its CPU time could not be read)")
        used = cpu - self.cpu_start
        spent = f"it used {max(used, 0.0):.2f} s of CPU in {now - self.begun:.2f} s"
        if now >= self.backstop():
            self.ended_by = "backstop"
            return FrameError("no reply before the wall-clock backstop", "timeout",
                              f"{spent}: the wall-clock backstop, {self.factor:g} times the "
                              "limit, passed")
        left = self.limit - used
        self.ended_by = "limit"
        if self.stage is not None:
            stage_left = self.stage - (cpu - self._stage_start()[1])
            if stage_left < left:
                left, self.ended_by = stage_left, "stage"
        if left <= CPU_EPSILON:
            return FrameError("no reply before the CPU-time limit", "timeout", spent)
        self.ended_by = ""
        self._checked = (now, cpu)
        return None
