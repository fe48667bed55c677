"""Options of the built-in environment families (config section ``families``): ``reasoning``,
``tool-use`` and the optional ``reasoning-gym``. Light at import: pydantic only; each validator
imports what it checks against."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from plugins.families.skills import (
    GAME_SKILLS,
    REASONING_SKILL_SETS,
    REASONING_SKILLS,
    TOOL_USE_SKILLS,
    select,
)

Difficulty = Literal["easy", "medium", "hard"]

_SKILLS_PER_WINDOW = (
    "skills active per regeneration window, in rotation as the reference's "
    "--spade-skills-per-regen: window w (iteration // loop.regeneration_interval) activates the "
    "k skills from (w*k) mod n, wrapping round, and the window's i-th proposal of this family "
    "gets active[i mod k]; 0: every skill in every window; null (default): skills rotate per "
    "proposal over the whole run")
_DIFFICULTY = ("difficulty line in the designer prompt (the reference's recipes: medium); "
               "null: none")


class ReasoningOptions(BaseModel):
    """Options of the ``reasoning`` family."""

    model_config = ConfigDict(extra="forbid")
    skill_set: Literal["default", "games"] = Field(
        default="default",
        description=f"which skills 'skills' names: 'default' ({', '.join(REASONING_SKILLS)}) or "
                    f"'games', the reference's six game skills ({', '.join(GAME_SKILLS)})")
    skills: list[str] = Field(
        default_factory=list,
        description="skills of the skill set whose prompt fragments the designer gets, in "
                    "rotation order (all of the set, in its order, when empty)")
    skills_per_window: int | None = Field(default=None, ge=0, description=_SKILLS_PER_WINDOW)
    difficulty: Difficulty | None = Field(default=None, description=_DIFFICULTY)
    skeleton: Literal["slots", "code"] = Field(
        default="slots",
        description="template for the skeleton designer: 'slots' (question and answer as text: "
                    "what a ~100M model can fill) or 'code' (a class with <FILL: ...> parts)")
    levels: list[int] = Field(
        default_factory=lambda: [1, 2, 3, 4, 5], min_length=1,
        description="difficulty levels the designer is asked for, rotated with the skills "
                    "(1 = a choice among a few options ... 5 = a multi-turn game; "
                    "docs/environments.md)")
    action: Literal["raw", "boxed"] = Field(
        default="raw",
        description="what the agent's reply is stepped with: 'raw' (the whole reply; the program "
                    "finds its answer) or 'boxed' (the reference's: the first brace-free "
                    "\\boxed{X}, else the last balanced one, re-wrapped as \\boxed{X}; the whole "
                    "reply when none; only text after the last </think> is read)")

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[int]) -> list[int]:
        from plugins.families.steering import REASONING_LEVELS

        return _known_levels(value, REASONING_LEVELS)

    @model_validator(mode="after")
    def _known(self) -> "ReasoningOptions":
        select(REASONING_SKILL_SETS[self.skill_set], self.skills)
        return self


def _known_levels(value: list[int], levels: dict[int, str]) -> list[int]:
    unknown = [v for v in value if v not in levels]
    if unknown:
        raise ValueError(f"unknown level(s) {unknown}; levels are {min(levels)} to {max(levels)}")
    if len(set(value)) != len(value):
        raise ValueError(f"levels {value} lists a level twice")
    return value


class ToolUseOptions(BaseModel):
    """Options of the ``tool-use`` family."""

    model_config = ConfigDict(extra="forbid")
    skills: list[str] = Field(
        default_factory=list,
        description=f"skills whose prompt fragments the designer gets (all when empty): "
                    f"{', '.join(TOOL_USE_SKILLS)}")
    multi_step: bool = Field(
        default=True,
        description="ask the designer for BFCL-style instructions revealed step by step")
    levels: list[int] = Field(
        default_factory=lambda: [1, 2, 3, 4, 5], min_length=1,
        description="difficulty levels the designer is asked for, rotated with the skills "
                    "(1 = one tool call ... 5 = a long multi-turn workflow)")
    task_types: list[str] = Field(
        default_factory=lambda: ["execute", "read-then-write", "missing-parameter", "irrelevant"],
        min_length=1, description="task types rotated across proposals (the reference's four)")
    domains: list[str] = Field(
        default_factory=list, min_length=0,
        description="domains of the proposals (free text; when empty, the domain_set's)")
    protocol: Literal["multi-call", "reference"] = Field(
        default="multi-call",
        description="how replies are played: 'multi-call' (every <tool_call> of a reply runs, a "
                    "format error scores 0) or 'reference' (an <answer> is checked first, only "
                    "the first call runs, a malformed call scores -0.1 and, when it has a "
                    "<tool_call> tag but no readable call, its turn gets no loss and the next "
                    "observation a format reminder)")
    domain_set: Literal["default", "reference"] = Field(
        default="default",
        description="domains used when 'domains' is empty: 'default' (this project's eight) or "
                    "'reference' (the reference's ten)")
    variant_draw: Literal["rotate", "weighted"] = Field(
        default="rotate",
        description="'rotate': task types and domains rotate with skills and levels, so every "
                    "combination comes round; 'weighted': the reference's draw per proposal, "
                    "task types weighted execute 3, read-then-write 2, missing-parameter 1, "
                    "irrelevant 1 and a uniform domain, seeded by run.seed and the proposal")
    skills_per_window: int | None = Field(default=None, ge=0, description=_SKILLS_PER_WINDOW)
    difficulty: Difficulty | None = Field(default=None, description=_DIFFICULTY)
    database: Literal["off", "mixed", "always"] = Field(
        default="off",
        description="ask the designer to keep the backend in the episode's in-memory SQLite "
                    "database and check success on its final state: 'off' (state in a dict), "
                    "'mixed' (every other proposal) or 'always'")

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[int]) -> list[int]:
        from plugins.families.steering import TOOL_USE_LEVELS

        return _known_levels(value, TOOL_USE_LEVELS)

    @field_validator("task_types")
    @classmethod
    def _task_types(cls, value: list[str]) -> list[str]:
        from plugins.families.steering import TOOL_USE_TASK_TYPES

        unknown = [v for v in value if v not in TOOL_USE_TASK_TYPES]
        if unknown:
            raise ValueError(f"unknown task type(s) {', '.join(unknown)}; known: "
                             f"{', '.join(TOOL_USE_TASK_TYPES)}")
        return value

    @field_validator("skills")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        select(TOOL_USE_SKILLS, value)
        return value


class DatasetSpec(BaseModel):
    """One dataset with its own options."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="registered reasoning-gym dataset name, e.g. leg_counting")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="options of the dataset's config class (not seed or size), e.g. "
                    "{min_animals: 3, max_animals: 8}")
    max_attempts: int | None = Field(default=None, ge=1, le=20,
                                     description="answers per episode (default: the family's)")


class ReasoningGymOptions(BaseModel):
    """Options of the ``reasoning-gym`` family."""

    model_config = ConfigDict(extra="forbid")
    datasets: list[str | DatasetSpec] = Field(
        default_factory=list,
        description="datasets of the pool: names or {name, config, max_attempts}; with no "
                    "datasets and no categories: basic_arithmetic, chain_sum, leg_counting, "
                    "spell_backward")
    categories: list[str] = Field(
        default_factory=list,
        description="add every dataset of these reasoning-gym categories (arithmetic, algebra, "
                    "algorithmic, arc, code, cognition, games, geometry, graphs, induction, "
                    "logic, probability)")
    exclude: list[str] = Field(
        default_factory=list,
        description="datasets to leave out (e.g. those held out for evaluation)")
    max_attempts: int = Field(default=1, ge=1, le=20,
                              description="answers per episode; the last answer's score counts")
    action: Literal["raw", "boxed"] = Field(
        default="raw",
        description="what the agent's reply is stepped with: 'raw' (the whole reply; the program "
                    "finds its answer) or 'boxed' (the reference's: the first brace-free "
                    "\\boxed{X}, else the last balanced one, re-wrapped as \\boxed{X}; the whole "
                    "reply when none; only text after the last </think> is read)")

    def dataset_specs(self) -> list[Any]:
        """``datasets`` as names and plain ``{name, config, max_attempts}`` dicts."""
        return [d if isinstance(d, str) else d.model_dump() for d in self.datasets]

    @model_validator(mode="after")
    def _known_to_the_library(self) -> "ReasoningGymOptions":
        # Names and configs are checked against the installed library, so `spade config check`
        # catches a misspelt dataset; without the library, building the family names the extra.
        import importlib.util

        from plugins.families import reasoning_gym

        if importlib.util.find_spec(reasoning_gym.LIBRARY) is None:
            return self
        from spade_core.errors import ConfigError

        try:
            reasoning_gym.ReasoningGymFamily.select(self.dataset_specs(), self.categories,
                                                    self.exclude, self.max_attempts)
        except ConfigError as exc:
            raise ValueError(str(exc).removeprefix("families: reasoning-gym: ")) from None
        return self


class ArithmeticOptions(BaseModel):
    """Options of the ``arithmetic`` family (docs/environments.md, "The arithmetic ladder")."""

    model_config = ConfigDict(extra="forbid")
    cells: list[str] = Field(
        default_factory=list,
        description="cells the designer may choose, each DIGITS OP DIGITS (digits 1-3, op + - "
                    "or *; e.g. 2+1: a two-digit number plus a one-digit number); empty: all 27")
    hint: Literal["example", "none"] = Field(
        default="example",
        description="'example': each program's info['hint'] is a worked example of its cell "
                    "(column steps of another item, the method and format without the answer); "
                    "'none': the hint call of the model writes the hint")

    @field_validator("cells")
    @classmethod
    def _cells(cls, value: list[str]) -> list[str]:
        from plugins.families.arithmetic import check_cells

        return check_cells(value)
