"""What the built-in families share: each satisfies the EnvFamily protocol, its prelude compiles
and defines every injected name, and the modules it provides to programs."""

from __future__ import annotations

import pytest

from spade_core.interfaces import EnvFamily

from plugins.families.reasoning import ReasoningFamily
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
