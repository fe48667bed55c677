"""Every seed environment of every built-in family is deterministic for a seed, solved by its own
``solution()``, not solved by junk actions, and ends. Checked in-process through the test fake,
and through the real ``process`` sandbox once it is installed."""

from __future__ import annotations

import itertools

import pytest

from spade_core.validation import validate

from fakes.in_process import FakeInProcessSession
from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily

FAMILIES = {"reasoning": ReasoningFamily(), "tool-use": ToolUseFamily()}
SEEDS = [(family, program) for family in FAMILIES.values() for program in family.seed_programs()]
IDS = [f"{family.name}:{program.description.split(':')[0]}" for family, program in SEEDS]
GAME_SEEDS = (0, 1, 7, 42, 123)
#: Far more steps than any seed's turn limit: an episode still running after this never ends.
MAX_STEPS = 60


def play(session, seed: int, actions) -> list[tuple]:
    """Reset with ``seed`` and play ``actions`` until the episode ends; the transcript."""
    observation, info = session.reset(seed)
    transcript = [(observation, sorted(info))]
    for action in itertools.islice(actions, MAX_STEPS):
        result = session.step(action)
        transcript.append((action, result.observation, result.reward, result.terminated,
                           result.truncated))
        if result.terminated or result.truncated:
            break
    return transcript


def solution_actions(family, session, seed: int) -> list[str]:
    _, info = session.reset(seed)
    actions = family.solution_actions(session.solution(), family.tools_from_info(info))
    assert actions, f"solution() of seed {seed} did not parse: {session.solution()!r}"
    return actions


def assert_seed_env_contract(family, open_session) -> None:
    """The checks shared by the in-process and the sandboxed runs."""
    for seed in GAME_SEEDS:
        first = open_session()
        actions = solution_actions(family, first, seed)
        solved = play(first, seed, iter(actions))
        last = solved[-1]
        assert last[3] is True and last[2] == 1.0, f"seed {seed}: solution did not solve: {last}"
        assert all(0.0 <= step[2] <= 1.0 for step in solved[1:])
        # Determinism: a fresh instance replays the same transcript for the same seed.
        second = open_session()
        assert play(second, seed, iter(actions)) == solved
        first.close()
        second.close()
    # Different seeds give different instances (the seed is used).
    session = open_session()
    instances = set()
    for seed in GAME_SEEDS:
        observation, _ = session.reset(seed)
        instances.add((observation, repr(session.solution())))
    assert len(instances) > 1
    # Junk never solves, and junk play ends within the turn limit.
    for probe in family.probe_actions():
        transcript = play(session, 3, itertools.repeat(probe))
        last = transcript[-1]
        assert not (last[3] and last[2] >= 1.0), f"junk {probe!r} solved it: {last}"
        assert last[3] or last[4], f"junk {probe!r} never ended the episode in {MAX_STEPS} steps"
    mixed = play(session, 5, itertools.cycle(family.probe_actions()))
    assert mixed[-1][2] < 1.0 and (mixed[-1][3] or mixed[-1][4])
    session.close()


@pytest.mark.parametrize("family,program", SEEDS, ids=IDS)
def test_seed_env_in_process(family, program):
    assert family.static_problems(program.source) == []
    assert_seed_env_contract(family, lambda: FakeInProcessSession(program.source, family))


def test_seed_counts_and_coverage():
    reasoning = FAMILIES["reasoning"].seed_programs()
    tool_use = FAMILIES["tool-use"].seed_programs()
    assert len(reasoning) >= 6 and len(tool_use) >= 4
    text = " ".join(p.description.lower() for p in reasoning)
    for skill in ("math", "logic", "algorithmic", "cognition", "single turn", "multi-turn"):
        assert skill in text, skill
    assert sum("multi-step" in p.description for p in tool_use) >= 3


# ------------------------------------------------------------------ the real sandbox (issue 3)

@pytest.fixture(scope="module")
def process_sandbox():
    from spade_core.components import BuildContext
    from spade_core.plugins import load_plugins

    loaded = load_plugins()
    component = loaded.registry.components.get(("sandbox", "process"))
    if component is None:
        pytest.skip("no sandbox named 'process' is registered yet (`spade plugins`); the "
                    "in-process runs above cover the families meanwhile")
    options = component.options() if component.options else {}
    sandbox = component.build(options, BuildContext())
    yield sandbox
    sandbox.close()


def _imports_provided_module(family, source: str) -> bool:
    return any(f"import {name}" in source or f"from {name} " in source for name in family.modules)


def _sandbox_provides_modules(sandbox, family) -> bool:
    probe = "from math_verify import parse, verify\n\nclass ProbeEnv:\n" \
            "    def reset(self, seed=None):\n        return 'x', {}\n" \
            "    def step(self, action):\n        return 'x', 0.0, True, False, {}\n"
    from spade_core.errors import SandboxError
    try:
        sandbox.open(probe, family=family).close()
        return True
    except SandboxError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("family,program", SEEDS, ids=IDS)
def test_seed_env_in_process_sandbox(process_sandbox, family, program):
    if _imports_provided_module(family, program.source) and not _sandbox_provides_modules(
            process_sandbox, family):
        pytest.skip("the sandbox does not yet make family.modules (math_verify) importable")
    assert_seed_env_contract(family, lambda: process_sandbox.open(program.source, family=family))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_sandbox_check_accepts_seeds(process_sandbox, name):
    family = FAMILIES[name]
    programs = [p.source for p in family.seed_programs()
                if not _imports_provided_module(family, p.source)
                or _sandbox_provides_modules(process_sandbox, family)]
    verdicts = validate(process_sandbox, programs, family=family)
    bad = [(v.category, v.message) for v in verdicts if not v.valid]
    assert not bad, bad
