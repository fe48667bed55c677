"""Sandboxes: run untrusted environment programs in isolation.

A sandbox provides isolation and nothing else: it loads a program, instantiates its environment
and forwards ``reset``/``step``/``solution`` calls, turning anything the program does wrong into a
:class:`~spade_core.errors.SandboxError` that carries a :class:`~spade_core.records.Verdict`.
Whether a program is a *valid* environment (SPADE's rules) is decided by
:mod:`spade_core.validation`, written against these interfaces, so every sandbox gives the same
verdicts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from spade_core.errors import SandboxError
from spade_core.records import StepResult

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily

T = TypeVar("T")
R = TypeVar("R")

#: Threads the default batched methods use to overlap waits on isolated workers (the calls
#: themselves run in the sandbox's workers; untrusted code never runs in these threads).
OVERLAP_THREADS = 8


def _overlapped(func: Callable[[T], R], items: Sequence[T]) -> list[R]:
    if len(items) <= 1:
        return [func(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(OVERLAP_THREADS, len(items)),
                            thread_name_prefix="spade-sandbox") as executor:
        return list(executor.map(func, items))


class SandboxSession(ABC):
    """One live environment instance inside an isolated worker.

    Every method raises ``SandboxError`` (with the verdict) when the program fails; after a
    failure the session is finished and further calls raise the same error.
    """

    #: Name of the environment class the program defined, when the sandbox knows it.
    env_class: str | None = None

    @abstractmethod
    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """The environment's ``reset(seed)``: first observation and info."""

    @abstractmethod
    def step(self, action: str) -> StepResult:
        """The environment's ``step(action)``, type-checked and size-capped."""

    @abstractmethod
    def solution(self) -> Any:
        """What the environment's ``solution()`` returned, as JSON data (validation replays it;
        the loop keeps it out of generated hints)."""

    @abstractmethod
    def close(self) -> None:
        """End the instance (calls the program's ``close()`` when it has one); idempotent."""


def _reset_one(item: tuple[SandboxSession, int | None]
               ) -> tuple[str, dict[str, Any]] | SandboxError:
    try:
        return item[0].reset(item[1])
    except SandboxError as exc:
        return exc


def _step_one(item: tuple[SandboxSession, str]) -> StepResult | SandboxError:
    try:
        return item[0].step(item[1])
    except SandboxError as exc:
        return exc


class Sandbox(ABC):
    """Loads programs into isolated workers and opens sessions on them.

    ``open`` raises ``SandboxError`` carrying the verdict when the program cannot even be
    instantiated. The batched methods have working defaults (one call per session, the waits
    overlapped in a few threads); a sandbox that can do better (several instances in one worker,
    one request frame per worker) overrides them.
    """

    @abstractmethod
    def isolation(self) -> dict[str, Any]:
        """What isolation is actually in force (``isolated``, ``method``, namespaces, uid,
        rlimits, filesystem view)."""

    @abstractmethod
    def open(self, program: str, *, family: "EnvFamily | None" = None) -> SandboxSession:
        """Start ``program`` (with ``family``'s prelude and modules) and instantiate its
        environment."""

    def open_many(self, program: str, count: int, *, family: "EnvFamily | None" = None
                  ) -> list[SandboxSession]:
        """``count`` independent instances of one program, each behaving as if it had a worker of
        its own. Raises ``SandboxError`` when none could be built. Default: ``open`` ``count``
        times (closing what was opened if one fails)."""
        opened: list[SandboxSession] = []
        try:
            for _ in range(count):
                opened.append(self.open(program, family=family))
        except SandboxError:
            for session in opened:
                session.close()
            raise
        return opened

    def reset_many(self, items: Sequence[tuple[SandboxSession, int | None]]
                   ) -> list[tuple[str, dict[str, Any]] | SandboxError]:
        """``reset(seed)`` of many sessions; results in input order, each a value or the
        ``SandboxError`` it raised (returned, never raised)."""
        return _overlapped(_reset_one, list(items))

    def step_many(self, items: Sequence[tuple[SandboxSession, str]]
                  ) -> list[StepResult | SandboxError]:
        """``step(action)`` of many sessions; results in input order, each a value or the
        ``SandboxError`` it raised (returned, never raised)."""
        return _overlapped(_step_one, list(items))

    @abstractmethod
    def close(self) -> None:
        """Stop every worker."""
