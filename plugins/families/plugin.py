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

    @field_validator("skills")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        select(REASONING_SKILLS, value)
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

    @field_validator("skills")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        select(TOOL_USE_SKILLS, value)
        return value


def _reasoning(options: ReasoningOptions, context):
    from plugins.families.reasoning import ReasoningFamily

    return ReasoningFamily(select(REASONING_SKILLS, options.skills), skeleton=options.skeleton)


def _tool_use(options: ToolUseOptions, context):
    from plugins.families.tool_use import ToolUseFamily

    return ToolUseFamily(select(TOOL_USE_SKILLS, options.skills), multi_step=options.multi_step)


@hookimpl
def register_env_families(register):
    register("reasoning", _reasoning, ReasoningOptions,
             "single- and multi-turn tasks answered with \\boxed{} (SPADE game format)")
    register("tool-use", _tool_use, ToolUseOptions,
             "multi-turn tool calling: subclasses of the injected ToolUseBaseEnv (SPADE format)")
