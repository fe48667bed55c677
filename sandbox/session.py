"""Sessions: live environment instances in workers, and the sandbox that opens them.

A worker hosts one instance (``open``) or several instances of one program (``open_many``); each
instance is a :class:`ProcessSession`. The sessions of one worker share its channel through a
:class:`WorkerLink`, which serialises their calls.

Every call has a wall-clock deadline (its own limit, capped by what is left of the instance's
episode budget). When a call fails the session is finished and the failure is raised as
``SandboxError`` carrying a :class:`Verdict`. A program error (it raised, or returned the wrong
types) ends only the instance it happened in; a timeout, memory exhaustion, a forbidden
construct, a crash or the worker's death ends every instance of the worker (the worker is
killed), each with a verdict saying so. Nothing a program does can raise anything else here.
"""

from __future__ import annotations

import itertools
import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from spade_core.errors import SandboxError
from spade_core.records import StepResult, Verdict

from sandbox.limits import Limits
from sandbox.pool import Executor, WorkerChannel
from sandbox.protocol import FrameError

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily

#: Reward bounds of the validation reference; the families' own contract is [0, 1].
REWARD_BOUND = 10.0
#: Verdict categories a worker may report.
CATEGORIES = frozenset({"syntax", "forbidden", "interface", "runtime_error", "timeout", "memory",
                        "output_limit", "crash"})
#: Failures that end every instance of a worker (see ``worker.WORKER_FATAL``).
WORKER_FATAL = frozenset({"timeout", "memory", "forbidden", "crash"})
#: Most instances one worker may host.
MAX_INSTANCES = 1024


class BadReply(Exception):
    """A reply that breaks the contract (wrong types, out of bounds): ends its instance."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


def status_verdict(status: dict[str, Any] | None, what: str) -> tuple[str, str]:
    """Category and message for a worker that ended with ``status`` (from the fork server)."""
    if status is None:
        return "crash", f"{what}: the worker died without a reply"
    sig = status.get("signal")
    if sig == "SIGXCPU":
        return "timeout", f"{what}: the CPU-time limit was exceeded"
    if sig in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE"):
        return "crash", f"{what}: the worker crashed ({sig})"
    if sig == "SIGKILL":
        return "crash", f"{what}: the worker was killed"
    if sig:
        return "crash", f"{what}: the worker ended by {sig}"
    return "crash", f"{what}: the worker exited with status {status.get('code')}"


def frame_verdict(channel: WorkerChannel, exc: FrameError, what: str,
                  budget: str) -> tuple[str, str]:
    """Category and message for a channel failure (no reply in time, too large, malformed, the
    worker gone); each of these ends the whole worker."""
    if exc.kind == "timeout":
        return "timeout", f"{what}: no answer within the {budget}"
    if exc.kind == "too_large":
        return "output_limit", f"{what}: {exc}"
    if exc.kind == "malformed":
        return "crash", f"{what}: {exc}"
    channel.close()
    return status_verdict(channel.exit_status(), what)


def reply_verdict(reply: dict[str, Any]) -> tuple[str, str, int | None, bool]:
    """Category, message, line and whether it ends the worker, for a failure the worker
    reported (its category is checked against the known ones: the worker is untrusted)."""
    category = reply.get("category")
    if category not in CATEGORIES:
        category = "crash"
    line = reply.get("line") if isinstance(reply.get("line"), int) else None
    message = str(reply.get("message", ""))[:2000]
    return category, message, line, category in WORKER_FATAL or bool(reply.get("fatal"))


# -- checking replies (shared by single and batched calls) ------------------------------------
def _observation(reply: dict[str, Any], limits: Limits, what: str) -> str:
    obs = reply.get("observation")
    if not isinstance(obs, str):
        raise BadReply("interface", f"{what}: the observation is not a str")
    if len(obs) > limits.max_observation_chars:
        raise BadReply("output_limit", f"{what}: observation of {len(obs)} characters")
    return obs


def _info(reply: dict[str, Any], what: str) -> dict[str, Any]:
    info = reply.get("info")
    if not isinstance(info, dict):
        raise BadReply("interface", f"{what}: info is not a dict")
    return info


def parse_reset(reply: dict[str, Any], limits: Limits) -> tuple[str, dict[str, Any]]:
    return _observation(reply, limits, "reset()"), _info(reply, "reset()")


def parse_step(reply: dict[str, Any], limits: Limits) -> StepResult:
    reward = reply.get("reward")
    try:
        finite = isinstance(reward, (int, float)) and not isinstance(reward, bool) \
            and math.isfinite(reward)
    except OverflowError:  # an integer too large for a float
        finite = False
    if not finite:
        raise BadReply("interface", f"step(): reward {str(reward)[:40]} is not a finite number")
    if abs(reward) > REWARD_BOUND:
        raise BadReply("interface", f"step(): reward {reward} is outside "
                       f"[-{REWARD_BOUND:g}, {REWARD_BOUND:g}]")
    terminated, truncated = reply.get("terminated"), reply.get("truncated")
    if not isinstance(terminated, bool) or not isinstance(truncated, bool):
        raise BadReply("interface", "step(): terminated and truncated must be bools")
    return StepResult(observation=_observation(reply, limits, "step()"), reward=float(reward),
                      terminated=terminated, truncated=truncated, info=_info(reply, "step()"))


def parse_solution(reply: dict[str, Any], limits: Limits) -> Any:
    return reply.get("value")


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
        """An instance ended on its own: end the worker once none is live."""
        if all(s.failure is not None or s.closed for s in self.sessions):
            self.end()


class ProcessSession:
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
        #: Seconds spent inside calls so far: the episode limit counts the program's time, not
        #: the time the agent takes to think between steps.
        self.busy = 0.0
        self.env_class: str | None = None
        self.failure: Verdict | None = None
        self.closed = False
        #: Whether the program defines ``close()`` (else closing needs no round trip).
        self.closes = True
        self.first_observation = ""

    # -- plumbing -----------------------------------------------------------------------------
    def budget(self, seconds: float) -> tuple[float, bool]:
        """Seconds this call may take, and whether the episode budget is what limits it."""
        left = self.limits.episode_seconds - self.busy
        return (left, True) if left < seconds else (seconds, False)

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
        if self.failure is not None:
            return SandboxError(self.failure)
        if self.closed:
            return SandboxError(Verdict(valid=False, category="crash",
                                        message="the session is closed"))
        return None

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
        return (f"episode time limit ({self.limits.episode_seconds:g} s in calls)"
                if by_episode else f"call time limit ({seconds:g} s)")

    def _call(self, what: str, message: dict[str, Any] | None, seconds: float,
              parse: Callable[[dict[str, Any], Limits], Any]) -> Any:
        link = self.link
        with link.lock:
            error = self.refused()
            if error is not None:
                raise error
            allowed, by_episode = self.budget(seconds)
            limit = self.limits.max_frame_bytes
            begun = time.monotonic()
            try:
                if message is None:
                    reply = link.channel.wait_ready(begun + allowed, limit)
                else:
                    reply = link.channel.request(link.address(self, message), begun + allowed,
                                                 limit)
            except FrameError as exc:
                raise self.frame_failure(exc, what, self.budget_text(seconds, by_episode)) \
                    from None
            finally:
                self.busy += time.monotonic() - begun
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
                try:
                    reply = link.channel.request(link.address(self, {"op": "close"}),
                                                 time.monotonic() + 1.0, 4096)
                except FrameError as exc:
                    if link.count > 1:  # a close() that hangs or kills its worker ends them all
                        self.frame_failure(exc, "close()", "call time limit (1 s)")
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


class ProcessSandbox:
    """The built-in sandbox (implements ``spade_core.interfaces.Sandbox``, with the optional
    batched methods ``open_many``, ``reset_many`` and ``step_many``)."""

    def __init__(self, executor: Executor, limits: Limits, check_workers: int = 2,
                 check_options: Any = None, warn: bool = True) -> None:
        self.executor = executor
        self.limits = limits
        self.check_workers = max(1, check_workers)
        self.check_options = check_options
        info = executor.isolation()
        if warn and not info.get("isolated"):
            print("spade: WARNING: the sandbox runs environment programs WITHOUT OS isolation "
                  "(allow_unisolated is set); untrusted code can reach this machine.",
                  file=sys.stderr)

    def isolation(self) -> dict[str, Any]:
        info = self.executor.isolation()
        limits = self.limits
        info["rlimits"] = {"cpu_seconds": limits.cpu_seconds, "memory_mb": limits.memory_mb,
                           "max_processes": limits.max_processes,
                           "max_file_bytes": limits.max_file_bytes,
                           "max_open_files": limits.max_open_files, "core": 0,
                           "cpu_seconds_scale": "per instance hosted by the worker",
                           "memory_scale": "per worker, shared by its instances"}
        info["time_limits"] = {"load": limits.load_seconds, "reset": limits.reset_seconds,
                               "step": limits.step_seconds, "episode": limits.episode_seconds,
                               "scale": "per instance"}
        return info

    def _spawn(self, program: str, family: "EnvFamily | None", limits: Limits,
               count: int) -> WorkerChannel:
        prelude = (family.prelude if family is not None else "") or ""
        family_modules = (getattr(family, "modules", None) or {}) if family is not None else {}
        imports = tuple(getattr(family, "preload_imports", None) or ()) if family is not None \
            else ()
        try:
            return self.executor.spawn(program, prelude, limits, modules=dict(family_modules),
                                       imports=imports, count=count)
        except (OSError, RuntimeError) as exc:
            raise SandboxError(Verdict(valid=False, category="crash",
                                       message=f"could not start a worker: {exc}")) from None

    def open(self, program: str, *, family: "EnvFamily | None" = None,
             limits: Limits | None = None) -> ProcessSession:
        """Start a worker for ``program`` and instantiate its environment."""
        limits = limits or self.limits
        session = ProcessSession(self._spawn(program, family, limits, 1), limits)
        session.load()
        return session

    def open_many(self, program: str, count: int, *, family: "EnvFamily | None" = None,
                  limits: Limits | None = None) -> list[ProcessSession]:
        """``count`` independent instances of ``program`` in ONE worker (one fork).

        Each instance runs the module afresh (own globals and classes) with its own ``random``
        generator and ``decimal`` context, so it behaves as it would in a worker of its own.
        Raises ``SandboxError`` when no instance could be built (the worker could not start, the
        program does not compile or load); an instance whose load alone failed is returned
        already failed (its first call raises its verdict)."""
        if type(count) is not int or not 1 <= count <= MAX_INSTANCES:
            raise ValueError(f"open_many: count must be an int from 1 to {MAX_INSTANCES}, "
                             f"not {count!r}")
        limits = limits or self.limits
        if count == 1:
            return [self.open(program, family=family, limits=limits)]
        from sandbox.batch import load_instances

        channel = self._spawn(program, family, limits, count)
        link = WorkerLink(channel, limits, count)
        sessions = [ProcessSession(channel, limits, link, index) for index in range(count)]
        link.sessions.extend(sessions)
        load_instances(link)
        if all(s.failure is not None for s in sessions):
            raise SandboxError(sessions[0].failure)
        return sessions

    def reset_many(self, items: Sequence[tuple[ProcessSession, int | None]]
                   ) -> list[tuple[str, dict[str, Any]] | SandboxError]:
        """``reset(seed)`` of each session, in input order: one request frame per worker, the
        workers served concurrently. Failures come back as ``SandboxError`` values."""
        from sandbox.batch import reset_many

        return reset_many(items)

    def step_many(self, items: Sequence[tuple[ProcessSession, str]]
                  ) -> list[StepResult | SandboxError]:
        """``step(action)`` of each session, in input order: one request frame per worker, the
        workers served concurrently. Failures come back as ``SandboxError`` values."""
        from sandbox.batch import step_many

        return step_many(items)

    def check(self, programs: Sequence[str], *, family: "EnvFamily | None" = None
              ) -> list[Verdict]:
        """Validate each program (see ``checks.py``); several run at once in the pool."""
        from sandbox.checks import CheckOptions, check_many

        return check_many(self, list(programs), family, self.check_options or CheckOptions(),
                          self.check_workers)

    def close(self) -> None:
        self.executor.close()

    def __enter__(self) -> "ProcessSandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
