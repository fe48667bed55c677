"""Environment families: the building blocks and family-specific checks for one kind of
environment (single-answer reasoning, multi-turn tool use, ...)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from spade_core.records import DesignTarget, EnvProgram


class EnvFamily(ABC):
    """What the designer, the sandbox, validation and the agent need to know about one family.

    Subclasses set :attr:`name` and implement the abstract prompt texts; every other member has a
    working default that a family overrides when it has something to add.
    """

    #: The family's name in configs and records (e.g. ``"reasoning"``).
    name: str = ""

    @property
    def prelude(self) -> str:
        """Trusted Python source run in the sandbox worker before a program of this family; the
        names it defines (base classes such as ``ToolUseBaseEnv``, answer helpers) are injected into
        the program's globals. Empty for families that need none."""
        return ""

    @property
    def injected_names(self) -> tuple[str, ...]:
        """Names the prelude gives programs (left out when looking for the environment class)."""
        return ()

    @property
    def modules(self) -> dict[str, str]:
        """``{module name: trusted source}`` that programs of this family may import."""
        return {}

    @property
    def preload_imports(self) -> tuple[str, ...]:
        """Installed libraries the trusted prelude imports; a sandbox loads them before it runs
        any program (e.g. before dropping privileges)."""
        return ()

    @property
    def skills(self) -> tuple[str, ...]:
        """The selected skills the designer may be asked for (empty: the family has none)."""
        return ()

    def design_target(self, n: int) -> DesignTarget:
        """What this family's ``n``-th proposal of a run asks for (``n`` counts from 0). The
        default rotates through :attr:`skills`, one per proposal, with no level; a family with
        levels or variants rotates those too, so that every combination comes round."""
        skills = self.skills
        return DesignTarget(skill=skills[n % len(skills)] if skills else None)

    def windowed_target(self, n: int, window: int, position: int) -> DesignTarget:
        """What the ``n``-th proposal asks for when the loop also says which regeneration window
        it belongs to (``iteration // loop.regeneration_interval``) and its ``position`` among
        this family's proposals of that iteration (from 0). This is what the self-play loop
        calls; a family whose targets depend on the window (the reference's skills per window)
        overrides it. The default: :meth:`design_target`, whatever the window."""
        return self.design_target(n)

    def target_brief(self, target: DesignTarget) -> str:
        """Prompt text for what ``target`` asks beyond its skill (whose text is
        ``designer_guide(target.skill)``): the level's meaning and the variant's choices. The
        default has none (empty)."""
        return ""

    def skeleton_for(self, target: DesignTarget) -> tuple[str, tuple[str, dict[str, str]] | None]:
        """The template and worked example (see :meth:`skeleton_example`) for ``target``; a
        family whose easy levels use a simpler task format returns that format's template. The
        default: :meth:`skeleton` and :meth:`skeleton_example` whatever the target."""
        return self.skeleton(), self.skeleton_example()

    @abstractmethod
    def designer_guide(self, skill: str | None = None) -> str:
        """Prompt fragment that explains the program contract to the designer (for one skill, or
        all selected skills when ``skill`` is ``None``)."""

    @abstractmethod
    def skeleton(self) -> str:
        """A program template with marked parts, for designers too small to write a whole class."""

    def skeleton_example(self) -> tuple[str, dict[str, str]] | None:
        """A worked example of filling :meth:`skeleton` (the topic and the filled slots), or
        ``None`` when the family has none."""
        return None

    def slot_request(self) -> str | None:
        """The sentence that asks a slot-filling designer (``skeleton``) what to write in this
        family's slots, or ``None`` (the default): one short question about the document."""
        return None

    def canonical_slots(self, values: dict[str, str]) -> dict[str, str] | None:
        """The designer's slot values in the one form the family writes them (so that the same
        choice makes the same program, and the memory sees one environment), or ``None`` to refuse
        the answer (no program). Host code: only reads text. The default keeps them as written."""
        return values

    @abstractmethod
    def agent_instructions(self) -> str:
        """System prompt for the agent playing environments of this family."""

    def seed_programs(self) -> list[EnvProgram]:
        """Hand-written example environments (prompt examples, tests, warm start)."""
        return []

    def solution_actions(self, solution: Any,
                         tools: list[dict[str, Any]] | None = None) -> list[str] | None:
        """Turn what ``env.solution()`` returned into actions to replay, or ``None`` when it cannot
        be replayed (solvability is then unverified rather than refused). ``tools`` are the native
        schemas of the first ``info["tools"]``, for families whose solutions name tool calls.

        The default takes an action string or a list of action strings (the SPADE game format)."""
        if isinstance(solution, str):
            return [solution]
        if isinstance(solution, list) and all(isinstance(a, str) for a in solution):
            return list(solution)
        return None

    def hint_instructions(self) -> str:
        """The system prompt of the hint call for this family's environments (with
        ``hints.prompt: family``). The default asks for a game hint: the key insight and the
        answer format, never the answer; the ``tool-use`` family asks for a procedural strategy."""
        from spade_core.hint_prompts import GAME_HINT_SYSTEM

        return GAME_HINT_SYSTEM

    def validator_instructions(self) -> str:
        """The system prompt of the optional LLM validator (``validation.llm``) for this family's
        programs. The default is lenient: reject only a clear fatal defect of a game (it cannot
        be won, or winning does not pay and end it); the ``tool-use`` family audits whether every
        criterion can be met with its tools."""
        from spade_core.validator_prompts import GAME_VALIDATOR_SYSTEM

        return GAME_VALIDATOR_SYSTEM

    def criteria_probe(self) -> str | None:
        """An action that makes this family's environments report, in that step's info under
        ``criteria_at_reset``, how their success criteria fare on their current state:
        ``{"criteria": n, "raised": [{"index": i, "error": "..."}, ...]}``, evaluated in the
        sandbox. The "criteria at reset" gate (``validation.reset_gate``) sends it right after
        ``reset``. ``None`` (the default): the family's environments have no such criteria and
        the gate passes them."""
        return None

    def state_probe(self) -> str | None:
        """An action that makes this family's environments report their final state, in that
        step's info under ``final_state``: ``{"goal": True/False/None, "digest": "..." or None}``
        (``goal``: the program's own check of its state, ``None`` when it has none; ``digest``: a
        hash of its state, e.g. its database). Validation sends it after ``reset`` (the goal must
        not hold yet: doing nothing must not succeed) and after replaying the solution on two
        instances (the goal holds; the digests agree: the final state is deterministic for a
        seed). ``None`` (the default): no such checks."""
        return None

    def hint_contradicts(self, hint: str, solution_actions: list[str] | None) -> bool | None:
        """Whether ``hint`` states an answer other than the one the seeded instance's solution
        (``solution_actions``, from :meth:`solution_actions`) ends with: ``True``/``False``, or
        ``None`` when the family cannot tell (the default). A family whose environments end in one
        answer compares the hint's claims with it
        (``spade_core.selfplay.hint_writer.contradicts_answer``).
        Host code: never evaluate the hint."""
        return None

    def static_problems(self, source: str) -> list[str]:
        """Cheap checks of the source before any sandbox work; each message says what would be
        right. The default finds none."""
        return []

    def probe_actions(self) -> tuple[str, ...]:
        """Junk actions validation plays to check that nonsense does not solve an environment;
        empty (the default): validation's own junk actions."""
        return ()

    def tools_from_info(self, info: dict[str, Any]) -> list[dict[str, Any]] | None:
        """Native OpenAI tool schemas for chat templates (``tools=``) from a reset's ``info``, or
        ``None`` (the default) when the family's agent uses no native tools."""
        return None

    def action_from_reply(self, reply: str) -> str:
        """The action ``step`` receives for the agent's ``reply`` (the conversation keeps the
        reply itself). Runs on the host, so it must only process text, never evaluate it. The
        default passes the whole reply."""
        return reply

    def masked_reply(self, reply: str) -> str | None:
        """When the family's protocol keeps this reply out of the loss (a malformed tool call),
        the note appended to the environment's next observation; ``None`` (the default): the
        reply is trained on as usual."""
        return None

    def close(self) -> None:
        """Release resources; the default has none."""
