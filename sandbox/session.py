"""Sessions: one live environment in one worker, and the sandbox that opens them.

Every call has a wall-clock deadline (its own limit, capped by what is left of the episode). When
a call fails (the program raised, returned the wrong types, ran out of time or memory, or the
worker died) the session is finished: the worker is killed and the failure is raised as
``SandboxError`` carrying a :class:`Verdict`. Nothing a program does can raise anything else here.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
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


def _status_verdict(status: dict[str, Any] | None, what: str) -> tuple[str, str]:
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


class ProcessSession:
    """One environment instance in one isolated worker (implements ``SandboxSession``)."""

    def __init__(self, channel: WorkerChannel, limits: Limits) -> None:
        self.channel = channel
        self.limits = limits
        self.started = time.monotonic()
        #: Seconds spent inside calls so far: the episode limit counts the program's time, not
        #: the time the agent takes to think between steps.
        self.busy = 0.0
        self.env_class: str | None = None
        self.failure: Verdict | None = None
        self.first_observation = ""

    # -- plumbing -----------------------------------------------------------------------------
    def _budget(self, seconds: float) -> tuple[float, bool]:
        """Seconds this call may take, and whether the episode budget is what limits it."""
        left = self.limits.episode_seconds - self.busy
        return (left, True) if left < seconds else (seconds, False)

    def _deadline(self, seconds: float) -> float:
        return time.monotonic() + self._budget(seconds)[0]

    def _fail(self, category: str, message: str, line: int | None = None) -> SandboxError:
        self.failure = Verdict(valid=False, category=category, message=message[:2000],
                               observation=self.first_observation[:2048],
                               seconds=time.monotonic() - self.started, line=line)
        self.channel.kill()
        self.channel.close()
        return SandboxError(self.failure)

    def _exchange(self, what: str, message: dict[str, Any] | None,
                  seconds: float) -> dict[str, Any]:
        if self.failure is not None:
            raise SandboxError(self.failure)
        allowed, by_episode = self._budget(seconds)
        limit = self.limits.max_frame_bytes
        begun = time.monotonic()
        try:
            if message is None:
                reply = self.channel.wait_ready(begun + allowed, limit)
            else:
                reply = self.channel.request(message, begun + allowed, limit)
        except FrameError as exc:
            if exc.kind == "timeout":
                budget = (f"episode time limit ({self.limits.episode_seconds:g} s in calls)"
                          if by_episode else f"call time limit ({seconds:g} s)")
                raise self._fail("timeout", f"{what}: no answer within the {budget}") from None
            if exc.kind == "too_large":
                raise self._fail("output_limit", f"{what}: {exc}") from None
            if exc.kind == "malformed":
                raise self._fail("crash", f"{what}: {exc}") from None
            self.channel.close()
            category, text = _status_verdict(self.channel.exit_status(), what)
            raise self._fail(category, text) from None
        finally:
            self.busy += time.monotonic() - begun
        if not reply.get("ok"):
            category = reply.get("category")
            if category not in ("syntax", "forbidden", "interface", "runtime_error", "timeout",
                                "memory", "output_limit", "crash"):
                category = "crash"
            line = reply.get("line") if isinstance(reply.get("line"), int) else None
            raise self._fail(category, str(reply.get("message", ""))[:2000], line)
        return reply

    def _text(self, reply: dict[str, Any], what: str) -> str:
        obs = reply.get("observation")
        if not isinstance(obs, str):
            raise self._fail("interface", f"{what}: the observation is not a str")
        if len(obs) > self.limits.max_observation_chars:
            raise self._fail("output_limit", f"{what}: observation of {len(obs)} characters")
        return obs

    def _info(self, reply: dict[str, Any], what: str) -> dict[str, Any]:
        info = reply.get("info")
        if not isinstance(info, dict):
            raise self._fail("interface", f"{what}: info is not a dict")
        return info

    # -- the SandboxSession API ----------------------------------------------------------------
    def load(self) -> str:
        reply = self._exchange("loading the program", None, self.limits.load_seconds)
        name = reply.get("env_class")
        self.env_class = name if isinstance(name, str) else None
        return self.env_class or ""

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        if seed is not None and not isinstance(seed, int):
            raise TypeError("seed must be an int or None")
        reply = self._exchange(f"reset(seed={seed})", {"op": "reset", "seed": seed},
                               self.limits.reset_seconds)
        obs = self._text(reply, "reset()")
        if not self.first_observation:
            self.first_observation = obs
        return obs, self._info(reply, "reset()")

    def step(self, action: str) -> StepResult:
        if not isinstance(action, str):
            raise TypeError("action must be a str")
        reply = self._exchange("step()", {"op": "step", "action": action},
                               self.limits.step_seconds)
        reward = reply.get("reward")
        try:
            finite = isinstance(reward, (int, float)) and not isinstance(reward, bool) \
                and math.isfinite(reward)
        except OverflowError:  # an integer too large for a float
            finite = False
        if not finite:
            raise self._fail("interface", f"step(): reward {str(reward)[:40]} is not a finite "
                             "number")
        if abs(reward) > REWARD_BOUND:
            raise self._fail("interface", f"step(): reward {reward} is outside "
                             f"[-{REWARD_BOUND:g}, {REWARD_BOUND:g}]")
        terminated, truncated = reply.get("terminated"), reply.get("truncated")
        if not isinstance(terminated, bool) or not isinstance(truncated, bool):
            raise self._fail("interface", "step(): terminated and truncated must be bools")
        return StepResult(observation=self._text(reply, "step()"), reward=float(reward),
                          terminated=terminated, truncated=truncated,
                          info=self._info(reply, "step()"))

    def solution(self) -> Any:
        """What the environment's ``solution()`` returned (JSON-decoded)."""
        reply = self._exchange("solution()", {"op": "solution"}, self.limits.step_seconds)
        return reply.get("value")

    def close(self) -> None:
        if self.failure is None and not getattr(self.channel, "closed", False):
            try:
                self.channel.request({"op": "close"}, self._deadline(1.0), 4096)
            except FrameError:
                pass
        self.channel.kill()
        self.channel.close()

    def __enter__(self) -> "ProcessSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ProcessSandbox:
    """The built-in sandbox (implements ``spade_core.interfaces.Sandbox``)."""

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
                           "max_open_files": limits.max_open_files, "core": 0}
        info["time_limits"] = {"load": limits.load_seconds, "reset": limits.reset_seconds,
                               "step": limits.step_seconds, "episode": limits.episode_seconds}
        return info

    def open(self, program: str, *, family: "EnvFamily | None" = None,
             limits: Limits | None = None) -> ProcessSession:
        """Start a worker for ``program`` and instantiate its environment."""
        limits = limits or self.limits
        prelude = (family.prelude if family is not None else "") or ""
        family_modules = (getattr(family, "modules", None) or {}) if family is not None else {}
        imports = tuple(getattr(family, "preload_imports", None) or ()) if family is not None \
            else ()
        try:
            channel = self.executor.spawn(program, prelude, limits, modules=dict(family_modules),
                                          imports=imports)
        except (OSError, RuntimeError) as exc:
            raise SandboxError(Verdict(valid=False, category="crash",
                                       message=f"could not start a worker: {exc}")) from None
        session = ProcessSession(channel, limits)
        session.load()
        return session

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
