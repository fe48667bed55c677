"""Sandboxes: run untrusted environment programs in isolation and judge them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from spade_core.records import StepResult, Verdict

if TYPE_CHECKING:
    from spade_core.interfaces.family import EnvFamily


@runtime_checkable
class SandboxSession(Protocol):
    """One live environment instance inside an isolated worker."""

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]: ...

    def step(self, action: str) -> StepResult: ...

    def close(self) -> None: ...

    # Optional: ``solution()`` returns what the environment's ``solution()`` returned (JSON data).
    # The loop uses it, when present, to keep the answer out of generated hints.


@runtime_checkable
class Sandbox(Protocol):
    """Loads programs into isolated workers, opens sessions on them and validates them.

    A failure of the program (crash, timeout, forbidden construct) never raises out of ``check``: it
    becomes a :class:`Verdict`. ``open`` raises ``spade_core.errors.SandboxError`` carrying the
    verdict when the program cannot even be instantiated.
    """

    def isolation(self) -> dict[str, Any]:
        """What isolation is actually in force (namespaces, uid, rlimits, filesystem view)."""
        ...

    def open(self, program: str, *, family: "EnvFamily | None" = None) -> SandboxSession: ...

    # Optional batched methods (callers look them up with ``getattr`` and fall back to one call
    # per session; the built-in ``process`` sandbox has them):
    # ``open_many(program, count, *, family=None) -> list[SandboxSession]``: ``count`` independent
    # instances of one program (each behaves as if it had a worker of its own; the ``process``
    # sandbox hosts them in one worker); raises ``SandboxError`` when none could be built.
    # ``reset_many(items: Sequence[tuple[session, int | None]])`` and
    # ``step_many(items: Sequence[tuple[session, str]])``: the calls of many sessions at once,
    # results in input order, each a value or a ``SandboxError`` (returned, never raised).

    def check(
        self, programs: Sequence[str], *, family: "EnvFamily | None" = None
    ) -> list[Verdict]: ...

    def close(self) -> None: ...
