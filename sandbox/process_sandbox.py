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

    def __init__(self, executor: Executor, limits: Limits, warn: bool = True) -> None:
        self.executor = executor
        self.limits = limits
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
                           "cpu_seconds_scale": "per instance hosted by the worker",
                           "memory_scale": "per worker, shared by its instances"}
        info["time_limits"] = {"load": limits.load_seconds, "reset": limits.reset_seconds,
                               "step": limits.step_seconds, "episode": limits.episode_seconds,
                               "scale": "per instance", "clock": "the worker's CPU time",
                               "wall_backstop": f"{limits.wall_factor:g} x each limit"}
        return info

    def _spawn(self, program: str, family: "EnvFamily | None", limits: Limits,
               count: int) -> WorkerChannel:
        prelude = (family.prelude if family is not None else "") or ""
        family_modules = dict(family.modules) if family is not None else {}
        imports = tuple(family.preload_imports) if family is not None else ()
        try:
            return self.executor.spawn(program, prelude, limits, modules=family_modules,
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
            derived = self._derived[python] = ProcessSandbox(executor, self.limits, warn=False)
        return derived

    def close(self) -> None:
        derived, self._derived = list(self._derived.values()), {}
        for sandbox in derived:
            sandbox.close()
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
        pass

    def shut_down(self) -> None:
        super().close()
