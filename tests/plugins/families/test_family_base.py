"""What the built-in families share: each satisfies the EnvFamily protocol, its prelude compiles
and defines every injected name, and the modules it provides to programs."""

from __future__ import annotations

import pytest

from spade_core.interfaces import EnvFamily

from plugins.families.family_base import BoxedAnswerFamily
from plugins.families.reasoning import ReasoningFamily
from plugins.families.reasoning_gym import ReasoningGymFamily
from plugins.families.tool_use import ToolUseFamily


@pytest.mark.parametrize("family", [ReasoningFamily(), ToolUseFamily()], ids=lambda f: f.name)
def test_builtin_families_satisfy_the_protocol(family):
    assert isinstance(family, EnvFamily)
    assert family.prelude and family.designer_guide() and family.skeleton()
    assert family.agent_instructions() and family.probe_actions()
    marker = "{{QUESTION}}" if family.name == "reasoning" else "<FILL"
    assert marker in family.skeleton()
    for program in family.seed_programs():
        assert program.family == family.name and program.description
    compile(family.prelude, "<prelude>", "exec")
    namespace: dict = {"__name__": "__prelude__"}
    exec(compile(family.prelude, "<prelude>", "exec"), namespace)  # noqa: S102
    assert all(name in namespace for name in family.injected_names)


def test_tool_use_prelude_exports_the_base_class_and_helpers():
    names = ToolUseFamily().injected_names
    assert "ToolUseBaseEnv" in names and "answers_match" in names
    assert ReasoningFamily().modules.keys() == {"math_verify"}
    assert ToolUseFamily().modules.keys() == {"tool_use_base_env"}


@pytest.mark.parametrize("family", [ReasoningFamily, lambda **kw: ReasoningGymFamily([], **kw)],
                         ids=["reasoning", "reasoning-gym"])
def test_boxed_answer_families_read_replies_by_their_action_option(family):
    raw, boxed = family(), family(action="boxed")
    assert isinstance(raw, BoxedAnswerFamily)
    assert raw.agent_instructions() == raw.agent_text
    assert "Only the first \\boxed{} of your reply counts." in boxed.agent_instructions()
    reply = "Maybe \\boxed{3}, no: \\boxed{4}"
    assert raw.action_from_reply(reply) == reply and boxed.action_from_reply(reply) == "\\boxed{3}"
    assert raw.probe_actions() == list(raw.probes) and raw.probe_actions() is not raw.probes
    assert raw.hint_contradicts("The answer is 5.", ["\\boxed{4}"]) is True
