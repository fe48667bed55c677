"""Registers the built-in environment families, ``reasoning`` and ``tool-use``, through the
``register_env_families`` hook. Light at import: no heavy library is loaded here."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from spade_core.hookspecs import hookimpl
from plugins.families.skills import REASONING_SKILLS, TOOL_USE_SKILLS, select


class ReasoningOptions(BaseModel):
    """Options of the ``reasoning`` family."""

    model_config = ConfigDict(extra="forbid")
    skills: list[str] = Field(
        default_factory=list,
        description=f"skills whose prompt fragments the designer gets (all when empty): "
                    f"{', '.join(REASONING_SKILLS)}")
    skeleton: Literal["slots", "code"] = Field(
        default="slots",
        description="template for the skeleton designer: 'slots' (question and answer as text: "
                    "what a ~100M model can fill) or 'code' (a class with <FILL: ...> parts)")
    levels: list[int] = Field(
        default_factory=lambda: [1, 2, 3, 4, 5], min_length=1,
        description="difficulty levels the designer is asked for, rotated with the skills "
                    "(1 = a choice among a few options ... 5 = a multi-turn game; "
                    "docs/environments.md)")

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[int]) -> list[int]:
        from plugins.families.steering import REASONING_LEVELS

        return _known_levels(value, REASONING_LEVELS)

    @field_validator("skills")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        select(REASONING_SKILLS, value)
        return value


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
        description="domains rotated across proposals (free text; the built-in eight when empty)")

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


def _reasoning(options: ReasoningOptions, context):
    from plugins.families.reasoning import ReasoningFamily

    return ReasoningFamily(select(REASONING_SKILLS, options.skills), skeleton=options.skeleton,
                           levels=options.levels)


def _tool_use(options: ToolUseOptions, context):
    from plugins.families.tool_use import ToolUseFamily

    return ToolUseFamily(select(TOOL_USE_SKILLS, options.skills), multi_step=options.multi_step,
                         levels=options.levels, task_types=options.task_types,
                         domains=options.domains)


@hookimpl
def register_env_families(register):
    register("reasoning", _reasoning, ReasoningOptions,
             "single- and multi-turn tasks answered with \\boxed{} (SPADE game format)")
    register("tool-use", _tool_use, ToolUseOptions,
             "multi-turn tool calling: subclasses of the injected ToolUseBaseEnv (SPADE format)")
