"""The reasoning family: its skeleton kinds, and the hint instructions and contradictions it
gives (against the tool-use family's)."""

from __future__ import annotations

from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily


def test_reasoning_skeleton_kinds():
    assert "<FILL" in ReasoningFamily(skeleton="code").skeleton()
    assert "{{ANSWER}}" in ReasoningFamily(skeleton="slots").skeleton()


def test_hint_instructions_and_contradictions_are_the_familys():
    from spade_core.hint_prompts import GAME_HINT_SYSTEM, TOOL_USE_HINT_SYSTEM

    assert ReasoningFamily().hint_instructions() == GAME_HINT_SYSTEM  # the default
    assert ToolUseFamily().hint_instructions() == TOOL_USE_HINT_SYSTEM
    assert ToolUseFamily().hint_contradicts("The answer is 7.", ["<answer>done</answer>"]) is None
    reasoning = ReasoningFamily()
    solution = reasoning.solution_actions("no")
    assert reasoning.hint_contradicts("The answer is yes.", solution) is True
    assert reasoning.hint_contradicts("Answer as \\boxed{NO}.", solution) is False
    assert reasoning.hint_contradicts("Read each clause.", solution) is None
    assert reasoning.hint_contradicts("The answer is 1/2.", ["\\boxed{0.5}"]) is False
