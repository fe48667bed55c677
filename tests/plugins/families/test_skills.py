"""Prompt fragments per skill: a family's designer guide carries the selected skills' fragments,
and selecting skills keeps their order and refuses an unknown one."""

from __future__ import annotations

import pytest

from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily


def test_designer_guides_carry_the_selected_skill_fragments():
    family = ReasoningFamily()
    assert all(f"SKILL: {s}" in family.designer_guide() for s in
               ("math", "logic", "algorithmic", "cognition"))
    only = family.designer_guide(skill="logic")
    assert "SKILL: logic" in only and "SKILL: math" not in only
    with pytest.raises(ValueError, match="selected: math, logic"):
        family.designer_guide(skill="chess")
    assert "BFCL-style" in ToolUseFamily().designer_guide()
    assert "Multi-step" not in ToolUseFamily(multi_step=False).designer_guide()


def test_skills_are_selected_in_the_given_order_and_an_unknown_one_is_refused():
    from plugins.families.skills import REASONING_SKILLS, select

    assert [s.name for s in select(REASONING_SKILLS, ["logic", "math"])] == ["logic", "math"]
    assert [s.name for s in select(REASONING_SKILLS, None)] == list(REASONING_SKILLS)
    with pytest.raises(ValueError, match="unknown skill.s. chess; known: math, logic"):
        select(REASONING_SKILLS, ["math", "chess"])
    fragment = REASONING_SKILLS["math"].fragment()
    assert fragment.startswith("SKILL: math - ") and "\n  - " in fragment
