"""The host's side of live environment instances: :class:`ProcessSession` (one instance in a
worker) and :class:`WorkerLink` (the worker its instances share).

A worker hosts one instance (``open``) or several instances of one program (``open_many``); each
instance is a :class:`ProcessSession`. The sessions of one worker share its channel through a
:class:`WorkerLink`, which serialises their calls.

Every call has a limit on the worker's CPU time (its own limit, capped by what is left of the
instance's episode budget), with the wall clock a backstop (``sandbox/cpu_clock.py``). When a
call fails the session is finished and the failure is raised as
``SandboxError`` carrying a :class:`Verdict`. A program error (it raised, or returned the wrong
types) ends only the instance it happened in; a timeout, memory exhaustion, a forbidden
construct, a crash or the worker's death ends every instance of the worker (the worker is
killed), each with a verdict saying so. Nothing a program does can raise anything else here.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from spade_core.errors import SandboxError
from spade_core.interfaces.sandbox import SandboxSession
from spade_core.records import StepResult, Verdict

from sandbox.cpu_clock import CallClock, charged, first_deadline, reported_cpu
from sandbox.executors import WorkerChannel
from sandbox.limits import Limits
from sandbox.protocol import FrameError, decode
from sandbox.worker_replies import (
    BadReply,
    frame_verdict,
    parse_reset,
    parse_solution,
    parse_step,
    refusal,
    reply_verdict,
)


#: CPU seconds a program's own ``close()`` may take.
CLOSE_SECONDS = 1.0


class WorkerLink:
    """The host's side of one worker, shared by the sessions of its instances: the channel, a
    lock that serialises their calls, and failure that spreads to all of them."""

    _order = itertools.count()

    def __init__(self, channel: WorkerChannel, limits: Limits, count: int = 1) -> None:
        self.channel = channel
        self.limits = limits
        self.count = count
        self.lock = threading.Lock()
        #: Lock order for calls that hold several links at once (batches across workers).
        self.order = next(self._order)
        self.sessions: list[ProcessSession] = []
        self.ended = False
        #: The worker's CPU seconds at its last reply (0 at the fork): where its next call
        #: begins on the clock the limits count.
        self.cpu = 0.0
        #: Instances the worker has loaded over its life (a reused worker numbers on from them).
        self.hosted = count
        #: Called when every instance has ended and the worker is healthy: ``True`` when the
        #: sandbox keeps the worker for a later ``open_many`` of its program
        #: (``sandbox/idle_workers.py``); else the worker ends.
        self.release: Callable[["WorkerLink"], bool] | None = None

    def note_cpu(self, reply: dict[str, Any]) -> float | None:
        """Record the worker's CPU time that ``reply`` carries (it never goes back)."""
        cpu = reported_cpu(reply)
        if cpu is not None and cpu > self.cpu:
            self.cpu = cpu
        return cpu

    def request(self, message: dict[str, Any] | None, limit: int, deadline: float,
                clock: Callable[[], CallClock], markers: bool = False) -> dict[str, Any]:
        """Send ``message`` (``None``: wait for the ready reply) and wait for the reply until
        ``deadline``, then while the call's clock (``clock()``, built only then) allows: at
        each deadline it checks the worker's CPU time and either moves the deadline on or ends
        the wait with a timeout. ``markers``: skip the worker's progress markers (loading
        several instances). The caller records the reply's CPU time (:meth:`note_cpu`)."""
        sent = message is None
        timer: CallClock | None = None
        while True:
            try:
                if not sent:
                    sent = True
                    reply = decode(self.channel.request_body(message, deadline, limit,
                                                             math.inf)) if markers \
                        else self.channel.request(message, deadline, limit)
                elif markers:
                    reply = self.channel.wait_ready(deadline, limit, math.inf)
                else:
                    reply = self.channel.wait_ready(deadline, limit)
            except FrameError as exc:
                now = time.monotonic()
                if exc.kind != "timeout" or now < deadline:  # the channel's own timeout
                    raise
                if timer is None:
                    timer = clock()
                error = timer.expired(now)
                if error is not None:
                    raise error from None
                deadline = timer.deadline()
                continue
            return reply

    def address(self, session: "ProcessSession", message: dict[str, Any]) -> dict[str, Any]:
        """``message`` for ``session``'s instance (one-instance workers need no index)."""
        if self.count > 1:
            message["i"] = session.index
        return message

    def end(self) -> None:
        """Kill the worker and close the channel (idempotent)."""
        if not self.ended:
            self.ended = True
            self.channel.kill()
            self.channel.close()

    def fail_all(self, cause: "ProcessSession | None", category: str, message: str,
                 line: int | None = None) -> None:
        """A worker-wide failure: every live instance ends with a verdict saying why."""
        for session in self.sessions:
            if session.failure is not None or session.closed:
                continue
            if session is cause or cause is None or self.count == 1:
                session.set_failure(category, message, line)
            else:
                session.set_failure(
                    category, f"{message} [in instance {cause.index} of this worker; a "
                    f"{category} ends all {self.count} instances of a worker]", None,
                    {"failed_instance": cause.index})
        self.end()

    def retire(self) -> None:
        """An instance ended on its own: once none is live, hand the worker back to the sandbox
        (a reusable one) or end it."""
        if all(s.failure is not None or s.closed for s in self.sessions):
            if self.release is not None and not self.ended and self.release(self):
                self.ended = True  # this link is done; the worker now waits in the sandbox
                return
            self.end()


class ProcessSession(SandboxSession):
    """One environment instance in an isolated worker (implements ``SandboxSession``)."""

    def __init__(self, channel: WorkerChannel, limits: Limits,
                 link: WorkerLink | None = None, index: int = 0) -> None:
        if link is None:
            link = WorkerLink(channel, limits)
            link.sessions.append(self)
        self.link = link
        self.channel = channel
        self.index = index
        self.limits = limits
        self.started = time.monotonic()
        #: CPU seconds spent inside calls so far: the episode limit counts the program's time,
        #: not the time the agent takes to think between steps (wall seconds for a channel that
        #: cannot tell CPU time).
        self.busy = 0.0
        #: Wall seconds spent inside calls so far, against the episode's wall-clock backstop.
        self.busy_wall = 0.0
        self.env_class: str | None = None
        self.failure: Verdict | None = None
        self.closed = False
        #: Whether the program defines ``close()`` (else closing needs no round trip).
        self.closes = True
        self.first_observation = ""

    # -- plumbing -----------------------------------------------------------------------------
    def budget(self, seconds: float, wall_left: float | None = None) -> tuple[float, bool]:
        """CPU seconds this call may take, and whether the episode budget is what limits it
        (the episode's wall-clock backstop spent, ``wall_left``, counts as no time left)."""
        left = self.limits.episode_seconds - self.busy
        if (self.wall_left() if wall_left is None else wall_left) <= 0:
            left = 0.0
        return (left, True) if left < seconds else (seconds, False)

    def wall_left(self) -> float:
        """Wall seconds left of the episode's backstop (``wall_factor`` × ``episode_seconds``)."""
        return self.limits.wall_factor * self.limits.episode_seconds - self.busy_wall

    def charge(self, cpu: float, wall: float) -> None:
        """Count a call's CPU and wall time against the episode budget and its backstop."""
        self.busy += cpu
        self.busy_wall += wall

    def set_failure(self, category: str, message: str, line: int | None = None,
                    details: dict[str, Any] | None = None) -> Verdict:
        self.failure = Verdict(valid=False, category=category, message=message[:2000],
                               observation=self.first_observation[:2048],
                               seconds=time.monotonic() - self.started, line=line,
                               details=details or {})
        return self.failure

    def fail(self, category: str, message: str, line: int | None = None,
             worker: bool = False) -> SandboxError:
        """End this instance (and, for worker-wide failures, all of its worker's)."""
        if worker or self.link.count == 1:
            self.link.fail_all(self, category, message, line)
        else:
            self.set_failure(category, message, line)
            self.link.retire()
        return SandboxError(self.failure)

    def refused(self) -> SandboxError | None:
        """The error a call on this session gets without reaching the worker, if any."""
        return refusal(self.failure, self.closed)

    def frame_failure(self, exc: FrameError, what: str, budget: str) -> SandboxError:
        """The channel failed: a worker-wide failure (the worker is killed)."""
        category, text = frame_verdict(self.link.channel, exc, what, budget)
        return self.fail(category, text, worker=True)

    def reply_failure(self, reply: dict[str, Any], what: str = "",
                      budget: str = "") -> SandboxError:
        """The worker reported a failure; a fatal one ends every instance."""
        category, message, line, fatal = reply_verdict(reply)
        if category == "timeout" and what and budget:
            message = f"{what}: no answer within the {budget}"
        return self.fail(category, message, line, worker=fatal)

    def budget_text(self, seconds: float, by_episode: bool) -> str:
        return (f"episode time limit ({self.limits.episode_seconds:g} s of CPU in calls)"
                if by_episode else f"call time limit ({seconds:g} s of CPU)")

    def _call(self, what: str, message: dict[str, Any] | None, seconds: float,
              parse: Callable[[dict[str, Any], Limits], Any]) -> Any:
        link = self.link
        with link.lock:
            error = self.refused()
            if error is not None:
                raise error
            wall_left = self.wall_left()
            allowed, by_episode = self.budget(seconds, wall_left)
            factor, cpu_start = self.limits.wall_factor, link.cpu
            begun = time.monotonic()

            def clock() -> CallClock:
                return CallClock(link.channel, cpu_start, allowed, factor, wall_left=wall_left,
                                 begun=begun)

            try:
                reply = link.request(None if message is None else link.address(self, message),
                                     self.limits.max_frame_bytes,
                                     first_deadline(begun, allowed, factor, wall_left), clock)
            except FrameError as exc:
                wall = time.monotonic() - begun
                self.charge(wall, wall)
                raise self.frame_failure(exc, what, self.budget_text(seconds, by_episode)) \
                    from None
            wall = time.monotonic() - begun
            self.charge(charged(cpu_start, link.note_cpu(reply), wall), wall)
            if not reply.get("ok"):
                raise self.reply_failure(reply)
            try:
                return parse(reply, self.limits)
            except BadReply as exc:
                raise self.fail(exc.category, str(exc)) from None

    # -- the SandboxSession API ----------------------------------------------------------------
    def load(self) -> str:
        def ready(reply: dict[str, Any], _limits: Limits) -> str:
            name = reply.get("env_class")
            self.env_class = name if isinstance(name, str) else None
            self.closes = reply.get("closes") is not False
            return self.env_class or ""

        return self._call("loading the program", None, self.limits.load_seconds, ready)

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        if seed is not None and not isinstance(seed, int):
            raise TypeError("seed must be an int or None")
        obs, info = self._call(f"reset(seed={seed})", {"op": "reset", "seed": seed},
                               self.limits.reset_seconds, parse_reset)
        if not self.first_observation:
            self.first_observation = obs
        return obs, info

    def step(self, action: str) -> StepResult:
        if not isinstance(action, str):
            raise TypeError("action must be a str")
        return self._call("step()", {"op": "step", "action": action}, self.limits.step_seconds,
                          parse_step)

    def solution(self) -> Any:
        """What the environment's ``solution()`` returned (JSON-decoded)."""
        return self._call("solution()", {"op": "solution"}, self.limits.step_seconds,
                          parse_solution)

    def close(self) -> None:
        """End this instance; the worker ends with its last instance. Calls the program's
        ``close()`` when it defines one (a one-instance worker is always asked, as before)."""
        link = self.link
        with link.lock:
            if self.closed:
                return
            if self.failure is None and not link.ended and (link.count == 1 or self.closes):
                clock = CallClock(link.channel, link.cpu, CLOSE_SECONDS,
                                  self.limits.wall_factor)
                try:
                    reply = link.request(link.address(self, {"op": "close"}), 4096,
                                         clock.deadline(), lambda: clock)
                    link.note_cpu(reply)
                except FrameError as exc:
                    if link.count > 1:  # a close() that hangs or kills its worker ends them all
                        self.frame_failure(exc, "close()",
                                           f"call time limit ({CLOSE_SECONDS:g} s of CPU)")
                else:
                    if link.count > 1 and not reply.get("ok") and reply_verdict(reply)[3]:
                        self.reply_failure(reply)
            self.closed = True
            if link.count == 1:
                link.end()
            link.retire()

    def __enter__(self) -> "ProcessSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
