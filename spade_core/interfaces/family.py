"""Environment families: the building blocks and family-specific checks for one kind of
environment (single-answer reasoning, multi-turn tool use, ...).

Optional members a family may add, which callers look up with ``getattr`` (so they are not part
of the runtime-checkable protocol): ``injected_names`` (the prelude's exported names),
``modules`` (``{module name: trusted source}`` programs may import), ``preload_imports``
(installed libraries the trusted prelude imports; the sandbox loads them before forking),
``static_problems(source)`` (AST checks before any sandbox work), ``probe_actions()`` (junk that must not solve an
environment), ``skills`` and ``designer_guide(skill=None)``, ``tools_from_info(info)`` (native
tool schemas for chat templates), and a ``tools=`` keyword on ``solution_actions``. See
``docs/environments.md``.
"""

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
