"""The sandbox the host opens environment instances with: :class:`ProcessSandbox`.

It spawns workers through an :class:`~sandbox.executors.Executor` and hands back sessions
(:class:`~sandbox.process_session.ProcessSession`, one per environment instance); batched calls
over many sessions live in ``batch.py``, the checks of a worker's replies in ``replies.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from spade_core.errors import SandboxError
from spade_core.interfaces.sandbox import Sandbox
from spade_core.records import StepResult, Verdict

from sandbox.executors import Executor, WorkerChannel
from sandbox.idle_workers import REUSE_INSTANCES, IdleWorker, IdleWorkers, program_key
from sandbox.limits import Limits
from sandbox.process_session import ProcessSession, WorkerLink

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily

__all__ = ["MAX_INSTANCES", "KeptProcessSandbox", "ProcessSandbox"]

#: Most instances one worker may host.
MAX_INSTANCES = 1024


class ProcessSandbox(Sandbox):
    """The built-in sandbox: isolated fork-server workers, with batched ``open_many`` (several
    instances of one program in one worker), ``reset_many`` and ``step_many`` (one request frame
    per worker)."""

    def __init__(self, executor: Executor, limits: Limits, warn: bool = True,
                 idle_workers: int = 0) -> None:
        self.executor = executor
        self.limits = limits
        #: Workers kept for a later ``open_many`` of their program (``idle_workers`` option).
        self.idle = IdleWorkers(idle_workers)
        #: Sandboxes like this one on other interpreters (:meth:`on_interpreter`), by path.
        self._derived: dict[str, ProcessSandbox] = {}
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
                           "cpu_seconds_scale": "per instance hosted by the worker (a "
                           f"reusable worker: {REUSE_INSTANCES}, the most it loads)",
                           "memory_scale": "per worker, shared by its instances"}
        info["reuse"] = self.idle.describe()
        info["time_limits"] = {"load": limits.load_seconds, "reset": limits.reset_seconds,
                               "step": limits.step_seconds, "episode": limits.episode_seconds,
                               "scale": "per instance", "clock": "the worker's CPU time",
                               "wall_backstop": f"{limits.wall_factor:g} x each limit"}
        return info

    @staticmethod
    def _family_parts(family: "EnvFamily | None") -> tuple[str, dict[str, str], tuple[str, ...]]:
        if family is None:
            return "", {}, ()
        return family.prelude or "", dict(family.modules), tuple(family.preload_imports)

    def _spawn(self, program: str, family: "EnvFamily | None", limits: Limits,
               count: int, reuse: int = 0) -> WorkerChannel:
        prelude, family_modules, imports = self._family_parts(family)
        reusable = {"reuse": reuse} if reuse else {}  # executors without reuse never get it
        try:
            return self.executor.spawn(program, prelude, limits, modules=family_modules,
                                       imports=imports, count=count, **reusable)
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
        key = program_key(program, *self._family_parts(family), limits) \
            if self.idle.size > 0 else None
        sessions = self._reused(key, count, limits) if key is not None else None
        if sessions is None:
            channel = self._spawn(program, family, limits, count,
                                  REUSE_INSTANCES if key is not None else 0)
            sessions = self._load(WorkerLink(channel, limits, count), 0, key, None)
        if all(s.failure is not None for s in sessions):
            raise SandboxError(sessions[0].failure)
        return sessions

    def _load(self, link: WorkerLink, first: int, key: str | None,
              message: dict[str, Any] | None) -> list[ProcessSession]:
        """The sessions of ``link``'s instances ``first``.. once the worker has loaded them
        (with ``key``: the worker is offered to :attr:`idle` when they have all ended)."""
        from sandbox.batch import load_instances

        sessions = [ProcessSession(link.channel, link.limits, link, first + index)
                    for index in range(link.count)]
        link.sessions.extend(sessions)
        link.hosted = first + link.count
        if key is not None:
            link.release = lambda done: self.idle.put(
                key, IdleWorker(done.channel, done.cpu, done.hosted))
        load_instances(link, message)
        return sessions

    def _reused(self, key: str, count: int, limits: Limits) -> list[ProcessSession] | None:
        """``count`` fresh instances in a kept worker of this program, or ``None`` (none is
        kept, or the kept one failed to load them: a fresh worker is forked instead)."""
        idle = self.idle.take(key, count)
        if idle is None:
            return None
        link = WorkerLink(idle.channel, limits, count)
        link.cpu = idle.cpu
        sessions = self._load(link, idle.hosted, key, {"op": "more", "count": count})
        if all(s.failure is not None for s in sessions):
            link.end()
            return None
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

    def on_interpreter(self, python: str) -> "ProcessSandbox":
        """A sandbox with this one's isolation, server count and limits whose fork servers run
        ``python`` (a benchmark suite's own environment); started once per interpreter, and
        closed with this one."""
        derived = self._derived.get(python)
        if derived is None:
            from sandbox.executors import ForkExecutor
            from sandbox.isolation import on_interpreter

            launch = getattr(self.executor, "launch", None)
            if launch is None:
                raise RuntimeError(f"{type(self.executor).__name__} cannot start servers on "
                                   "another interpreter")
            executor = ForkExecutor(on_interpreter(launch, python), len(self.executor.servers))
            derived = self._derived[python] = ProcessSandbox(executor, self.limits, warn=False,
                                                             idle_workers=self.idle.size)
        return derived

    def close(self) -> None:
        derived, self._derived = list(self._derived.values()), {}
        for sandbox in derived:
            sandbox.close()
        self.idle.clear(final=True)
        self.executor.close()

    def __enter__(self) -> "ProcessSandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KeptProcessSandbox(ProcessSandbox):
    """A process sandbox that outlives its run (``SPADE_KEEP_SANDBOXES=1``, see ``build.py``):
    ``close()`` keeps its fork servers for the next run of this process (a dead server is
    replaced when next used, as within a run); :meth:`shut_down` ends them."""

    def close(self) -> None:
        self.idle.clear()  # a run's programs are its own: nothing to reuse in the next run

    def shut_down(self) -> None:
        super().close()
