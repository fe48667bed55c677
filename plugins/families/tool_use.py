"""The ``tool-use`` family: multi-turn tool calling in the SPADE format. Programs subclass the
injected ``ToolUseBaseEnv`` (see ``preludes/tool_use_base.py``), which speaks the
``<tool_call>{json}</tool_call>`` / ``<answer>...</answer>`` protocol, validates arguments against
the program's schemas, limits turns and reveals BFCL-style instructions step by step."""

from __future__ import annotations

import random
from functools import cached_property
from typing import Any

from spade_core.records import DesignTarget

from plugins.families.family_base import SourceFamily
from plugins.families.replies import FORMAT_REMINDER, malformed_tool_call
from plugins.families.skills import TOOL_USE_SKILLS, Skill
from plugins.families.solutions import tool_use_actions
from plugins.families.steering import (
    REFERENCE_TASK_WEIGHTS,
    TOOL_USE_DOMAINS,
    TOOL_USE_LEVELS,
    TOOL_USE_TASK_TYPES,
    level_text,
    rotate,
)

#: The action ``ToolUseBaseEnv`` answers with its criteria applied to its state (the same string
#: as the prelude's ``CRITERIA_PROBE``; a test keeps them equal).
CRITERIA_PROBE = "<spade-criteria-probe/>"
#: The action ``ToolUseBaseEnv`` answers with its final-state report (``goal_reached()`` and the
#: database's digest); the same string as the prelude's ``STATE_PROBE``.
STATE_PROBE = "<spade-state-probe/>"

BASE_METHODS: tuple[str, ...] = (
    "__init__", "reset", "step", "solution", "close", "get_tools", "execute_tool",
    "_check_answer", "_advance_if_done", "_incorrect_answer_feedback", "_obs_suffix",
    "create_database", "goal_reached",
)
#: How often proposals ask for a database-backed environment (the ``database`` option).
DATABASE_MODES: tuple[str, ...] = ("off", "mixed", "always")

CONTRACT = """\
Write ONE Python module defining exactly one class that subclasses ToolUseBaseEnv and whose
name ends in "Env". ToolUseBaseEnv is already defined: do NOT import it. Standard library only.
Tools are simulated by methods: no network, files or subprocess.

  class DescriptiveNameEnv(ToolUseBaseEnv):
      def reset(self, seed=None):
          rng = random.Random(seed)   # or random.seed(seed); randomness only here
          self._state = {...}         # mutable simulated backend
          self._tools = {"name": {"description": "...", "parameters": {"type": "object",
              "properties": {"arg": {"type": "string"}}, "required": ["arg"]}}, ...}
          self._expected_answer = ...  # computed from the data
          return "task for the user", {}
      def tool_name(self, arg): change or read self._state, return a string
      def solution(self): "1. name(arg='x') 2. other(n=3) 3. <answer>...</answer>"

The base class already handles: parsing <tool_call>{"name": ..., "arguments": {...}}</tool_call>,
calling tool_<name>(**arguments), rejecting arguments that break the schema (types, enum,
required, unknown names) with a helpful message, <answer> checking through _check_answer()
(case-insensitive text, numbers within 0.01, equivalent expressions), turn limits, and native
tool schemas (get_tools()). Do NOT write step().

Rules:
- Parameter names of tool methods must equal the schema's property names.
- The agent must call several tools and combine results; the first observation never contains
  the answer. Wrong preconditions make mutation tools return an error string.
- Include one or two plausible tools the solution does not need.
- solution() lists the calls with literal arguments that solve THIS seeded instance, then the
  answer, so it can be replayed.
"""

MULTI_STEP = """\
Multi-step (BFCL-style) tasks: in reset() also set self._user_messages (3-5 short atomic
instructions), self._message_criteria (one callable per instruction: state -> bool, False at
reset, True once that instruction is done), self._current_msg = 0 and
self._expected_answer = "done"; return self._user_messages[0]. The base class reveals the next
instruction after the tool call that satisfies the current criterion and accepts
<answer>done</answer> only when all are complete.
"""

SKELETON = '''\
import random


class <FILL: DescriptiveName>Env(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        self._state = {<FILL: simulated records generated with rng>}
        self._tools = {
            "<FILL: tool>": {"description": "<FILL>", "parameters": {
                "type": "object", "properties": {"<FILL: arg>": {"type": "string"}},
                "required": ["<FILL: arg>"]}},
        }
        self._expected_answer = <FILL: computed from self._state>
        return "<FILL: the user's request and the answer format <answer>...</answer>>", {}

    def tool_<FILL: tool>(self, <FILL: arg>):
        <FILL: read or change self._state; return a string, or "Error: ..." on bad input>

    def solution(self):
        return "1. <FILL: tool>(<FILL: arg>='...') 2. <answer>...</answer>"
'''

DATABASE = """\
DATABASE STATE: keep the simulated backend in the episode's in-memory SQLite database instead
of a dict. In reset(), after seeding rng, call
    self.create_database(SCHEMA_SQL, {"table": [(col1, col2, ...), ...], ...})
with CREATE TABLE statements (PRIMARY KEY, NOT NULL, CHECK, FOREIGN KEY constraints welcome)
and seed rows generated with rng. Tools read and write it through self._db:
    self._db.query(sql, params) -> list of row dicts     self._db.query_one(sql, params) -> dict or None
    self._db.scalar(sql, params) -> one value or None     self._db.execute(sql, params) -> rows changed
    with self._db.transaction(): ...   (all statements commit together or not at all)
Always pass values as params ("... WHERE id = ?", (order_id,)), never formatted into the SQL.
A failed statement raises DatabaseError (e.g. a CHECK constraint): catch it in the tool and
return "Error: ..." so the agent can recover. Memory only: no files, ATTACH, PRAGMA or random().
Check success on the final state: define goal_reached(self) returning True once the database
holds the goal state (e.g. the order row exists with the right quantity and stock went down);
set self._expected_answer = None (then <answer>done</answer> scores only when goal_reached()
is True) or to a value the agent must also report. The goal must be False right after reset().
"""

DATABASE_SKELETON = '''\
import random

SCHEMA = """
CREATE TABLE <FILL: table> (id INTEGER PRIMARY KEY, <FILL: columns with constraints>);
"""


class <FILL: DescriptiveName>Env(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        self.create_database(SCHEMA, {"<FILL: table>": [<FILL: rows generated with rng>]})
        self._tools = {
            "<FILL: tool>": {"description": "<FILL>", "parameters": {
                "type": "object", "properties": {"<FILL: arg>": {"type": "integer"}},
                "required": ["<FILL: arg>"]}},
        }
        self._target = <FILL: the goal, computed from the seeded rows>
        self._expected_answer = None
        return "<FILL: the user's request; finish with <answer>done</answer>>", {}

    def tool_<FILL: tool>(self, <FILL: arg>):
        row = self._db.query_one("SELECT ... WHERE id = ?", (<FILL: arg>,))
        if row is None:
            return "Error: <FILL>"
        try:
            self._db.execute("UPDATE ... WHERE id = ?", (<FILL: arg>,))
        except DatabaseError as exc:
            return f"Error: {exc}"
        return "<FILL: what changed>"

    def goal_reached(self):
        return self._db.scalar("SELECT count(*) FROM ... WHERE ...", (...)) == 1

    def solution(self):
        return "1. <FILL: tool>(<FILL: arg>=...) 2. <answer>done</answer>"
'''

AGENT_INSTRUCTIONS = """\
You are an assistant that completes the user's request by calling tools. To call a tool, write
<tool_call>{"name": "<tool name>", "arguments": {<arguments as JSON>}}</tool_call>; the result
comes back in the next message. You may call several tools in one reply. Use only the tools
listed and follow their argument schemas. New instructions may arrive after a step is done.
When the task is complete, reply with <answer>your final answer</answer> (or
<answer>done</answer> when no value is asked for)."""

PROBE_ACTIONS: tuple[str, ...] = (
    "", "I will help you.", "<answer></answer>", "<answer>done</answer>", "<answer>0</answer>",
    '<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>',
    "<tool_call>not json</tool_call>", "\\boxed{done}",
)


class ToolUseFamily(SourceFamily):
    """Tool-use environments: subclasses of the injected ``ToolUseBaseEnv``."""

    name = "tool-use"
    seed_folder = "tool_use"
    prelude_files = ("answers.py", "preludes/sql_database.py", "preludes/tool_use_base.py")
    #: The database prelude's libraries, imported by the fork servers before they drop privileges.
    preload_imports = ("sqlite3", "hashlib")
    base_classes = {"ToolUseBaseEnv": BASE_METHODS}

    def __init__(self, skills: list[Skill] | None = None, multi_step: bool = True,
                 levels: list[int] | None = None, task_types: list[str] | None = None,
                 domains: list[str] | None = None, *, skills_per_window: int | None = None,
                 difficulty: str | None = None, variant_draw: str = "rotate",
                 seed: int = 0, protocol: str = "multi-call", database: str = "off") -> None:
        super().__init__(skills if skills is not None else list(TOOL_USE_SKILLS.values()),
                         skills_per_window=skills_per_window, difficulty=difficulty)
        self.multi_step = multi_step
        self.levels = list(levels) if levels else list(TOOL_USE_LEVELS)
        self.task_types = list(task_types) if task_types else list(TOOL_USE_TASK_TYPES)
        self.domains = list(domains) if domains else list(TOOL_USE_DOMAINS)
        self.protocol = protocol
        #: ``rotate``: task types and domains rotate with the skills and levels (every
        #: combination comes round); ``weighted``: the reference's draw per proposal, task types
        #: weighted 3:2:1:1 and domains uniform, from an RNG seeded by the run seed and ``n``.
        self.variant_draw = variant_draw
        self.seed = seed
        if database not in DATABASE_MODES:
            raise ValueError(f"database must be one of {', '.join(DATABASE_MODES)}, got "
                             f"{database!r}")
        #: ``off``: state in a dict (the reference's format); ``always``: every proposal keeps
        #: its state in the episode's SQLite database; ``mixed``: every other proposal does.
        self.database = database

    def _with_state(self, n: int, variant: dict[str, str]) -> dict[str, str]:
        if self.database == "always" or (self.database == "mixed" and n % 2 == 1):
            return {**variant, "state": "database"}
        return variant

    def design_target(self, n: int) -> DesignTarget:
        """Skills, the reference's four task types, levels and domains rotated together (or, with
        ``variant_draw: weighted``, task type and domain drawn: see :meth:`drawn_variant`)."""
        if self.variant_draw == "weighted":
            skill, level = rotate(n, [self.skills, self.levels])
            return DesignTarget(skill=skill, level=level, variant=self.with_difficulty(
                self._with_state(n, self.drawn_variant(n))))
        skill, task_type, level, domain = rotate(
            n, [self.skills, self.task_types, self.levels, self.domains])
        return DesignTarget(skill=skill, level=level, variant=self.with_difficulty(
            self._with_state(n, {"task_type": task_type, "domain": domain})))

    def windowed_target(self, n: int, window: int, position: int) -> DesignTarget:
        """With ``skills_per_window`` set, the skill is the window's (see
        :meth:`window_skill`); the rest as :meth:`design_target`."""
        skill = self.window_skill(window, position)
        target = self.design_target(n)
        if skill is None:
            return target
        return DesignTarget(skill=skill, level=target.level, variant=target.variant)

    def drawn_variant(self, n: int) -> dict[str, str]:
        """The reference's draw for proposal ``n``: a task type by the weights 3:2:1:1
        (execute, read-then-write, missing-parameter, irrelevant; types not selected are left
        out) and a domain uniformly, independently. The reference draws from Python's unseeded
        global RNG; this one is seeded by the run seed and ``n``, so a run is reproducible."""
        rng = random.Random(f"spade-tool-use:{self.seed}:{n}")
        weights = [REFERENCE_TASK_WEIGHTS.get(t, 1) for t in self.task_types]
        task_type = rng.choices(self.task_types, weights=weights)[0]
        return {"task_type": task_type, "domain": rng.choice(self.domains)}

    def target_brief(self, target: DesignTarget) -> str:
        lines = [level_text(TOOL_USE_LEVELS, target.level)] if target.level else []
        task_type = target.variant.get("task_type")
        if task_type:
            lines.append(f"TASK TYPE: {task_type} - {TOOL_USE_TASK_TYPES[task_type]}")
        if target.variant.get("domain"):
            lines.append(f"DOMAIN: {target.variant['domain']}")
        if target.variant.get("state") == "database":
            lines.append(DATABASE.rstrip())
        return "\n".join(lines + self.difficulty_brief(target))

    def skeleton_for(self, target: DesignTarget) -> tuple[str, tuple[str, dict[str, str]] | None]:
        """The database template for a target that asks for database state; else the usual."""
        if target.variant.get("state") == "database":
            return DATABASE_SKELETON, None
        return super().skeleton_for(target)

    @cached_property
    def prelude(self) -> str:
        """The base class, told which protocol its ``step`` follows (``protocol`` option)."""
        source = super().prelude
        if self.protocol != "multi-call":
            source += f"\n\nToolUseBaseEnv.protocol = {self.protocol!r}\n"
        return source

    @cached_property
    def modules(self) -> dict[str, str]:
        # The SPADE loader also lets programs `from tool_use_base_env import ToolUseBaseEnv`.
        return {"tool_use_base_env": self.prelude}

    def designer_guide(self, skill: str | None = None) -> str:
        parts = [CONTRACT] + ([MULTI_STEP] if self.multi_step else []) + [self.skill_fragment(skill)]
        return "\n".join(parts)

    def skeleton(self) -> str:
        return SKELETON

    def agent_instructions(self) -> str:
        if self.protocol == "reference":
            return AGENT_INSTRUCTIONS.replace("You may call several tools in one reply.",
                                              "Call one tool per reply.")
        return AGENT_INSTRUCTIONS

    def masked_reply(self, reply: str) -> str | None:
        """Under the reference protocol, a reply with a ``<tool_call>`` tag but no readable call
        (and no answer) is kept out of the loss and answered with a format reminder."""
        if self.protocol == "reference" and malformed_tool_call(reply):
            return FORMAT_REMINDER
        return None

    def probe_actions(self) -> list[str]:
        return list(PROBE_ACTIONS)

    def static_problems(self, source: str) -> list[str]:
        from plugins.families.program import leaf_env_classes, program_shape

        try:
            shape = program_shape(source)
        except SyntaxError:
            return super().static_problems(source)
        leaves = [c for c in leaf_env_classes(shape) if c not in self.base_classes]
        if len(leaves) == 1:
            chain, seen = [leaves[0]], set()
            while chain:
                current = chain.pop()
                if current in seen:
                    continue
                seen.add(current)
                if "ToolUseBaseEnv" in shape.bases.get(current, ()):
                    return super().static_problems(source)
                chain.extend(shape.bases.get(current, ()))
            return [f"class {leaves[0]} must subclass ToolUseBaseEnv (injected by the family; "
                    "do not import it)"]
        return super().static_problems(source)

    def solution_actions(self, solution: Any, tools: Any = None) -> list[str] | None:
        return tool_use_actions(solution, tools)

    def hint_instructions(self) -> str:
        from spade_core.hint_prompts import TOOL_USE_HINT_SYSTEM

        return TOOL_USE_HINT_SYSTEM

    def validator_instructions(self) -> str:
        from spade_core.validator_prompts import TOOL_USE_VALIDATOR_SYSTEM

        return TOOL_USE_VALIDATOR_SYSTEM

    def criteria_probe(self) -> str | None:
        """``ToolUseBaseEnv`` answers this action with its ``_message_criteria`` applied to
        ``_state`` (the prelude's ``CRITERIA_PROBE``)."""
        return CRITERIA_PROBE

    def state_probe(self) -> str | None:
        """``ToolUseBaseEnv`` answers this action with ``goal_reached()`` and its database's
        digest (the prelude's ``STATE_PROBE``), for validation's final-state checks."""
        return STATE_PROBE

    def tools_from_info(self, info: dict[str, Any]) -> list[dict[str, Any]] | None:
        tools = info.get("tools") if isinstance(info, dict) else None
        if isinstance(tools, list) and all(isinstance(t, dict) for t in tools):
            return tools
        return None
