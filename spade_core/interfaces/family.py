"""Environment families: the building blocks and family-specific checks for one kind of
environment (single-answer reasoning, multi-turn tool use, ...)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from spade_core.records import EnvProgram


@runtime_checkable
class EnvFamily(Protocol):
    """What the designer, the sandbox and the agent need to know about one family."""

    name: str

    @property
    def prelude(self) -> str:
        """Trusted Python source run in the sandbox worker before a program of this family; the
        names it defines (base classes such as ``ToolUseBaseEnv``, answer helpers) are injected into
        the program's globals. Empty for families that need none."""
        ...

    def designer_guide(self) -> str:
        """Prompt fragment that explains the program contract to the designer."""
        ...

    def skeleton(self) -> str:
        """A program template with marked parts, for designers too small to write a whole class."""
        ...

    def agent_instructions(self) -> str:
        """System prompt for the agent playing environments of this family."""
        ...

    def seed_programs(self) -> list[EnvProgram]:
        """Hand-written example environments (prompt examples, tests, warm start)."""
        ...

    def solution_actions(self, solution: Any) -> list[str] | None:
        """Turn what ``env.solution()`` returned into actions to replay, or ``None`` when it cannot
        be replayed (solvability is then unverified rather than refused)."""
        ...
