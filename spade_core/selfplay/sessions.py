"""Many sandbox sessions at once: open, reset and step them in few round trips.

Every sandbox has the batched calls ``open_many``, ``reset_many`` and ``step_many`` (the base
class's defaults make one call per session, their waits overlapped; the built-in ``process``
sandbox hosts several instances of one program in one worker and sends one request frame per
worker). Programs are opened from a small thread pool so that their workers start concurrently.
Failures come back as :class:`SandboxError` values in the result lists, in input order, and are
never raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from spade_core.errors import SandboxError
from spade_core.interfaces import EnvFamily, Sandbox, SandboxSession
from spade_core.records import EnvStatus, StepResult

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

        def one(spec: tuple[str, EnvFamily | None, int]) -> list[SandboxSession] | SandboxError:
            program, family, count = spec
            try:
                return list(self.sandbox.open_many(program, count, family=family))
            except SandboxError as exc:
                return exc

        return self.map(one, list(specs))

    def reset(self, items: Sequence[tuple[SandboxSession, int | None]]
              ) -> list[tuple[str, dict[str, Any]] | SandboxError]:
        """``reset(seed)`` of each session (``Sandbox.reset_many``)."""
        return list(self.sandbox.reset_many(list(items))) if items else []

    def step(self, items: Sequence[tuple[SandboxSession, str]]
             ) -> list[StepResult | SandboxError]:
        """``step(action)`` of each session (``Sandbox.step_many``)."""
        return list(self.sandbox.step_many(list(items))) if items else []

    def close(self, sessions: Sequence[SandboxSession]) -> None:
        """Close every session (errors on close are the program's last word, and ignored)."""

        def one(session: SandboxSession) -> None:
            try:
                session.close()
            except SandboxError:
                pass

        self.map(one, list(sessions))


class PlaySessions:
    """One iteration's play sessions: per playable environment (a proposal on the frontier)
    ``1 + rollouts + hint_plays`` sessions of its program, opened together (one worker with the
    ``process`` sandbox). The first is reset by the hint step; the others play the unhinted and
    hinted rollouts. Leaving the ``with`` block closes every session and the batch."""

    def __init__(self, sandbox: Sandbox, proposals: Sequence[Any], rollouts: int,
                 hint_plays: int) -> None:
        self.batch = SessionBatch(sandbox)
        self.playable = [p for p in proposals if p.status == EnvStatus.FRONTIER]
        self.rollouts, self.hint_plays = rollouts, hint_plays
        self.opened: list[list[SandboxSession] | SandboxError] = []

    def __enter__(self) -> "PlaySessions":
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.batch.close([s for o in self.opened if not isinstance(o, SandboxError)
                              for s in o[1:]])
        finally:
            self.batch.__exit__(*exc)

    def open(self) -> list[SandboxSession | SandboxError]:
        """Open every playable environment's sessions; returns each one's first session, or the
        error that stopped it."""
        self.opened = self.batch.open([(p.program, p.family, 1 + self.rollouts + self.hint_plays)
                                       for p in self.playable])
        return [o if isinstance(o, SandboxError) else o[0] for o in self.opened]

    def rollout_sessions(self, index: int) -> tuple[list[SandboxSession], list[SandboxSession]]:
        """The unhinted and the hinted rollouts' sessions of playable environment ``index``."""
        mine = self.opened[index]
        assert not isinstance(mine, SandboxError), "a failed open is rejected before rollouts"
        return mine[1:1 + self.rollouts], mine[1 + self.rollouts:]
