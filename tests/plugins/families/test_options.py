"""The families' options: unknown skills, levels and task types are refused with what is known."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from plugins.families.options import ReasoningOptions, ToolUseOptions


def test_options_validate_skill_names():
    assert ReasoningOptions(skills=["math"]).skills == ["math"]
    with pytest.raises(ValidationError, match="known: math, logic, algorithmic, cognition"):
        ReasoningOptions(skills=["geometry"])
    with pytest.raises(ValidationError):
        ToolUseOptions(max_turns=3)
    with pytest.raises(ValidationError, match="multi-step-workflows"):
        ToolUseOptions(skills=["juggling"])


def test_family_options_refuse_unknown_levels_and_task_types():
    with pytest.raises(ValueError, match="unknown level"):
        ReasoningOptions(levels=[0, 6])
    with pytest.raises(ValueError, match="twice"):
        ReasoningOptions(levels=[1, 1])
    with pytest.raises(ValueError, match="unknown task type"):
        ToolUseOptions(task_types=["execute", "dance"])


def test_the_games_skill_set_refuses_default_skill_names():
    with pytest.raises(ValueError, match="unknown skill"):
        ReasoningOptions(skill_set="games", skills=["math"])
    assert ReasoningOptions(skill_set="games", skills=["optimization"]).skills == ["optimization"]
