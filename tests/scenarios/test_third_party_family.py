"""Families are plugins: a toy third-party family defined here, and the one docs/environments.md
shows, satisfy the EnvFamily protocol, register through the hook, and run programs with their
injected names (in-process, through gymnasium's checker and in the real sandbox)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from fakes.cli import ROOT
from fakes.in_process import FakeInProcessSession
from spade_core.gym_env import SandboxTextEnv
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


# ------------------------------------------------------------- the documented example

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
