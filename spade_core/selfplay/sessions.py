"""Many sandbox sessions at once: open, reset and step them in few round trips.

A sandbox may offer batched calls (``open_many``, ``reset_many``, ``step_many``: several instances
of one program in one worker, one request frame per worker); the built-in ``process`` sandbox
does. For any other sandbox the same operations fall back to one call per session, issued from a
small thread pool so the waits on worker processes overlap. Failures come back as
:class:`SandboxError` values in the result lists, in input order, and are never raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from spade_core.errors import SandboxError
from spade_core.interfaces import EnvFamily, Sandbox, SandboxSession
from spade_core.records import StepResult

#: Threads that wait on sandbox workers at once (IPC only: untrusted code never runs here).
IO_THREADS = 8

T = TypeVar("T")
R = TypeVar("R")


class SessionBatch:
    """Batched access to one sandbox; one instance per phase (it owns a thread pool)."""

    def __init__(self, sandbox: Sandbox, threads: int = IO_THREADS) -> None:
        self.sandbox = sandbox
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="spade-sandbox")

    def __enter__(self) -> "SessionBatch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown(wait=True)

    def map(self, func: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``func`` over ``items`` in the pool, results in order."""
        if len(items) <= 1:
            return [func(item) for item in items]
        return list(self.pool.map(func, items))

    def open(self, specs: Sequence[tuple[str, EnvFamily | None, int]]
             ) -> list[list[SandboxSession] | SandboxError]:
        """For each ``(program, family, count)``: ``count`` independent sessions of the program
        (one worker when the sandbox can host several instances), or the error that stopped it."""
        open_many = getattr(self.sandbox, "open_many", None)

        def one(spec: tuple[str, EnvFamily | None, int]) -> list[SandboxSession] | SandboxError:
            program, family, count = spec
            opened: list[SandboxSession] = []
            try:
                if callable(open_many):
                    return list(open_many(program, count, family=family))
                for _ in range(count):
                    opened.append(self.sandbox.open(program, family=family))
                return opened
            except SandboxError as exc:
                for session in opened:
                    session.close()
                return exc

        return self.map(one, list(specs))

    def reset(self, items: Sequence[tuple[SandboxSession, int | None]]
              ) -> list[tuple[str, dict[str, Any]] | SandboxError]:
        """``reset(seed)`` of each session."""
        reset_many = getattr(self.sandbox, "reset_many", None)
        if callable(reset_many) and items:
            return list(reset_many(list(items)))

        def one(item: tuple[SandboxSession, int | None]) -> Any:
            try:
                return item[0].reset(item[1])
            except SandboxError as exc:
                return exc

        return self.map(one, list(items))

    def step(self, items: Sequence[tuple[SandboxSession, str]]
             ) -> list[StepResult | SandboxError]:
        """``step(action)`` of each session."""
        step_many = getattr(self.sandbox, "step_many", None)
        if callable(step_many) and items:
            return list(step_many(list(items)))

        def one(item: tuple[SandboxSession, str]) -> Any:
            try:
                return item[0].step(item[1])
            except SandboxError as exc:
                return exc

        return self.map(one, list(items))

    def close(self, sessions: Sequence[SandboxSession]) -> None:
        """Close every session (errors on close are the program's last word, and ignored)."""

        def one(session: SandboxSession) -> None:
            try:
                session.close()
            except SandboxError:
                pass

        self.map(one, list(sessions))
