"""Families are plugins: the built-in ones and a toy third-party family defined here satisfy the
EnvFamily protocol, register through the hook, and run programs with their injected names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from fakes.cli import ROOT
from fakes.in_process import FakeInProcessSession
from spade_core.gym_env import SandboxTextEnv
from plugins.families.options import ReasoningOptions, ToolUseOptions
from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily
from spade_core.components import BuildContext, Registry
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import EnvFamily
from spade_core.plugins import (LoadedPlugins, PluginInfo, collect_components, new_manager,
                                register_plugin)
from spade_core.records import EnvProgram
from spade_core.validation import validate


# ------------------------------------------------------------- a toy third-party family

TOY_PRELUDE = '''
__all__ = ["read_number"]


def read_number(action):
    """The integer after 'say', or None."""
    words = action.strip().lower().split()
    if len(words) == 2 and words[0] == "say" and words[1].lstrip("-").isdigit():
        return int(words[1])
    return None
'''

TOY_PROGRAM = '''
import random


class CountdownEnv:
    def __init__(self):
        self.target = 0
        self.turns = 0

    def reset(self, seed=None):
        self.target = random.Random(seed).randint(3, 9)
        self.turns = 0
        return f"Count down from {self.target} to 1, one 'say N' per turn.", {}

    def step(self, action):
        self.turns += 1
        expected = self.target - self.turns + 1
        if read_number(action) != expected:
            return f"Expected 'say {expected}'.", 0.0, True, False, {}
        if expected == 1:
            return "Done!", 1.0, True, False, {}
        return "Go on.", 0.0, False, False, {}

    def solution(self):
        return [f"say {n}" for n in range(self.target, 0, -1)]
'''


class ToyCountdownFamily(EnvFamily):
    """A third-party family: its own action syntax ('say N'), prelude and validator."""

    name = "toy-countdown"
    prelude = TOY_PRELUDE

    def designer_guide(self) -> str:
        return "Write a class ending in Env whose actions are 'say N'; read_number() is injected."

    def skeleton(self) -> str:
        return "class <FILL>Env:\n    ..."

    def agent_instructions(self) -> str:
        return "Reply with 'say N'."

    def seed_programs(self) -> list[EnvProgram]:
        return [EnvProgram(source=TOY_PROGRAM, family=self.name, description="countdown")]

    def solution_actions(self, solution: Any, tools: Any = None) -> list[str] | None:
        if isinstance(solution, list) and all(isinstance(a, str) for a in solution):
            return solution
        return None


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToyPlugin:
    @hookimpl
    def register_env_families(self, register):
        register("toy-countdown", lambda options, context: ToyCountdownFamily(), ToyOptions,
                 "count down, as a test of third-party families")


def registry_with(plugin: object, name: str = "toy") -> LoadedPlugins:
    pm = new_manager()
    info = PluginInfo(name=name, module="tests", distribution="toy-dist", version="0")
    register_plugin(pm, plugin, info)
    loaded = LoadedPlugins(manager=pm, plugins=[info], registry=Registry())
    collect_components(loaded)
    return loaded


def test_toy_family_registers_and_satisfies_the_protocol():
    loaded = registry_with(ToyPlugin())
    component = loaded.registry.resolve("env_family", "toy-countdown", "families[0]")
    family = component.build(ToyOptions(), BuildContext())
    assert isinstance(family, EnvFamily)
    assert component.distribution == "toy-dist"


def test_toy_family_runs_its_programs_with_injected_names():
    family = ToyCountdownFamily()
    program = family.seed_programs()[0]
    session = FakeInProcessSession(program.source, family)
    session.reset(4)
    actions = family.solution_actions(session.solution())
    results = [session.step(a) for a in actions]
    assert results[-1].reward == 1.0 and results[-1].terminated
    session.reset(4)
    assert session.step("say 0").reward == 0.0
    from gymnasium.utils.env_checker import check_env
    env = SandboxTextEnv(lambda: FakeInProcessSession(program.source, family))
    check_env(env, skip_render_check=True)


@pytest.mark.slow
def test_toy_family_in_the_real_sandbox():
    from spade_core.plugins import load_plugins

    component = load_plugins().registry.components.get(("sandbox", "process"))
    if component is None:
        pytest.skip("no sandbox named 'process' is registered yet")
    sandbox = component.build(component.options() if component.options else {}, BuildContext())
    try:
        [verdict] = validate(sandbox, [TOY_PROGRAM], family=ToyCountdownFamily())
        assert verdict.valid, verdict
    finally:
        sandbox.close()


# ------------------------------------------------------------------ the built-in families

def test_reasoning_skeleton_kinds():
    assert "<FILL" in ReasoningFamily(skeleton="code").skeleton()
    assert "{{ANSWER}}" in ReasoningFamily(skeleton="slots").skeleton()


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


def test_options_validate_skill_names():
    assert ReasoningOptions(skills=["math"]).skills == ["math"]
    with pytest.raises(ValidationError, match="known: math, logic, algorithmic, cognition"):
        ReasoningOptions(skills=["geometry"])
    with pytest.raises(ValidationError):
        ToolUseOptions(max_turns=3)
    with pytest.raises(ValidationError, match="multi-step-workflows"):
        ToolUseOptions(skills=["juggling"])


def test_factories_build_with_selected_skills():
    from plugins.families.plugin import _reasoning, _tool_use
    family = _reasoning(ReasoningOptions(skills=["logic", "math"]), BuildContext())
    assert family.skills == ("logic", "math")
    assert _tool_use(ToolUseOptions(multi_step=False), BuildContext()).multi_step is False


def test_installed_entry_point_lists_both_families(spade):
    result = spade("plugins")
    assert result.returncode == 0, result.stderr
    assert re.search(r"env_family\s+reasoning", result.stdout)
    assert re.search(r"env_family\s+tool-use", result.stdout)


def test_registration_module_is_light():
    code = ("import sys, plugins.families.plugin; heavy = ['gymnasium', 'numpy', 'torch', "
            "'RestrictedPython', 'transformers']; print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_documented_third_party_family_example_works():
    text = (ROOT / "docs" / "environments.md").read_text(encoding="utf-8")
    section = text.split("## Adding a family", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    namespace: dict = {"__name__": "doc_example"}
    exec(compile(code, "docs/environments.md", "exec"), namespace)  # noqa: S102
    loaded = registry_with(namespace["DiceFamilyPlugin"](), name="dice")
    component = loaded.registry.resolve("env_family", "dice", "families[0]")
    family = component.build(component.options(), BuildContext())
    assert isinstance(family, EnvFamily)
    program = family.seed_programs()[0]
    session = FakeInProcessSession(program.source, family)
    session.reset(1)
    actions = family.solution_actions(session.solution())
    assert session.step(actions[0]).reward == 1.0


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
