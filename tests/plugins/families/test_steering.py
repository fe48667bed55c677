"""Designer steering: each proposal asks for one skill and one difficulty level (and, for tool use,
one task type and domain), rotated so that every combination comes round; the level-1 reasoning
format is a yes/no question; what was asked is recorded on the environment and counted per skill.
"""

from __future__ import annotations

import itertools
import json

import pytest

from plugins.designer.full_program import FullProgram
from plugins.designer.options import FullProgramOptions, SkeletonOptions
from plugins.designer.skeleton import Skeleton, parse_values
from plugins.families.answers import extract_choice
from plugins.families.options import ReasoningOptions
from plugins.families.reasoning import CHOICE_SKELETON, SLOT_SKELETON, ReasoningFamily
from plugins.families.steering import TOOL_USE_TASK_TYPES, rotate
from plugins.families.tool_use import ToolUseFamily
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import PromptExamples
from spade_core.plugins import load_plugins
from spade_core.records import DesignTarget, Document

from fakes.selfplay import FakeSelfPlayPlugin, FakeSkilledFamily
from fakes.selfplay import metrics, one_iteration

DOC = Document(id="d", text="Prime numbers have exactly two divisors: one and themselves.",
               source="test")


@pytest.mark.parametrize("sizes", [(4, 2), (3, 2, 3), (6, 4, 5, 8), (1, 5)])
def test_rotation_covers_every_combination_once_per_cycle(sizes):
    axes = [list(range(n)) for n in sizes]
    cycle = 1
    for n in sizes:
        cycle *= n
    for start in (0, cycle):
        combos = [tuple(rotate(n, axes)) for n in range(start, start + cycle)]
        assert sorted(combos) == sorted(itertools.product(*axes))
    firsts = [rotate(n, axes)[0] for n in range(cycle)]
    if sizes[0] > 1:
        assert all(a != b for a, b in zip(firsts, firsts[1:]))


def test_rotation_refuses_an_empty_axis():
    with pytest.raises(ValueError, match="at least one value"):
        rotate(0, [[1], []])


def test_reasoning_targets_rotate_skills_and_levels():
    family = ReasoningFamily(levels=[1, 2])
    targets = [family.design_target(n) for n in range(8)]
    assert [t.skill for t in targets[:4]] == ["math", "logic", "algorithmic", "cognition"]
    assert sorted((t.skill, t.level) for t in targets) == sorted(
        itertools.product(family.skills, [1, 2]))
    assert family.target_brief(DesignTarget(skill="math", level=1)).startswith("LEVEL 1 of 5:")


def test_level_one_is_a_yes_no_template_and_higher_levels_are_open():
    family = ReasoningFamily()
    template, (_, example) = family.skeleton_for(DesignTarget(skill="logic", level=1))
    assert template == CHOICE_SKELETON and example["ANSWER"] in ("yes", "no")
    template, (_, example) = family.skeleton_for(DesignTarget(skill="logic", level=3))
    assert template == SLOT_SKELETON and "OPTIONS" not in example
    code = ReasoningFamily(skeleton="code")
    assert code.skeleton_for(DesignTarget(skill="math", level=1)) == (code.skeleton(), None)


def test_tool_use_rotates_the_four_task_types_and_domains():
    family = ToolUseFamily()
    targets = [family.design_target(n) for n in range(4)]
    assert {t.variant["task_type"] for t in targets} == set(TOOL_USE_TASK_TYPES)
    assert len({t.variant["domain"] for t in targets}) == 4
    brief = family.target_brief(targets[3])
    assert f"TASK TYPE: {targets[3].variant['task_type']}" in brief
    assert f"DOMAIN: {targets[3].variant['domain']}" in brief and "LEVEL" in brief


def test_the_skeleton_prompt_names_the_target_and_shows_its_example():
    family = ReasoningFamily()
    target = DesignTarget(skill="logic", level=1)
    messages = Skeleton(SkeletonOptions()).build(DOC, family, PromptExamples(), target)
    assert "Skill: logic. LEVEL 1 of 5: a yes/no question" in messages[-1]["content"]
    assert "Tom is a cat" in messages[2]["content"]  # the logic skill's worked example
    assert messages[-1]["content"].count("QUESTION:") == 1 and "OPTIONS" not in messages[-1]["content"]


def test_the_full_program_prompt_has_only_the_target_skill_and_its_level():
    family = ReasoningFamily()
    user = FullProgram(FullProgramOptions()).build(
        DOC, family, PromptExamples(), DesignTarget(skill="logic", level=4))[-1]["content"]
    assert "SKILL: logic" in user and "SKILL: math" not in user
    assert "LEVEL 4 of 5: several dependent steps" in user


def test_extraction_follows_the_target_template():
    family, skeleton = ReasoningFamily(), Skeleton(SkeletonOptions())
    answer = "Q: Is seven a prime number?\nA: yes"
    program = skeleton.extract(answer, family, DesignTarget(skill="math", level=1))
    assert "class GroundedYesNoEnv" in program and "'Is seven a prime number?'" in program
    program = skeleton.extract(answer, family, DesignTarget(skill="math", level=2))
    assert "class GroundedQuestionEnv" in program


def test_slot_initials_are_read_only_when_unambiguous():
    assert parse_values("Q: why?\nA: yes", ["QUESTION", "ANSWER"]) == {
        "QUESTION": "why?", "ANSWER": "yes"}
    assert parse_values("A: one\nANSWER: two", ["ANSWER", "AREA"]) == {"ANSWER": "two"}


@pytest.mark.parametrize("reply, options, chosen", [
    ("Every cat is an animal, so yes.", ["yes", "no"], "yes"),
    ("Yes... no, wait: \\boxed{yes}", ["yes", "no"], "yes"),
    ("I don't know.", ["yes", "no"], None),
    ("17 is larger than 71.", ["17", "71"], "71"),
    ("I live in New York", ["York", "New York"], "New York"),
    ("Nothing here", ["yes", "no"], None),
])
def test_extract_choice(reply, options, chosen):
    assert extract_choice(reply, options) == chosen


@pytest.fixture(scope="module")
def process_sandbox():
    sandbox = load_plugins().registry.build("sandbox", "process", {"workers": 1}, "test")
    yield sandbox
    sandbox.close()


def yes_no_program(question: str, answer: str) -> str:
    return Skeleton(SkeletonOptions()).extract(
        f"QUESTION: {question}\nANSWER: {answer}", ReasoningFamily(),
        DesignTarget(skill="logic", level=1))


def test_yes_no_environments_through_the_process_sandbox(process_sandbox):
    from spade_core.validation import ValidationOptions, validate

    family = ReasoningFamily()
    programs = [yes_no_program("Every cat is an animal. Tom is a cat. Is Tom an animal?", "yes"),
                yes_no_program("Is seven an even number?", "maybe"),
                yes_no_program("Is no number even?", "no")]
    good, maybe, leaks = validate(process_sandbox, programs, family=family,
                                  options=ValidationOptions())
    assert good.valid, good.message
    assert not maybe.valid and "ANSWER must be yes or no" in maybe.message
    assert not leaks.valid and "gives its own answer away" in leaks.message
    session = process_sandbox.open(programs[0], family=family)
    try:
        observation, _ = session.reset(3)
        assert "Answer yes or no" in observation and "Tom is a cat" in observation
        assert session.step("Tom is a cat, and every cat is an animal. Yes.").reward == 1.0
        session.reset(3)
        result = session.step("\\boxed{no}")
        assert result.reward == 0.0 and result.terminated  # one answer per episode
    finally:
        session.close()


def test_the_loop_records_targets_and_counts_them_per_skill_and_level(tmp_path):
    plugin = FakeSelfPlayPlugin(texts=["doc one", "doc two"], family=FakeSkilledFamily)
    run_dir = one_iteration(tmp_path, plugin)
    row = metrics(run_dir)[0]
    assert row["skills"] == {"alpha": {"proposed": 1, "valid": 1, "played": 1},
                             "beta": {"proposed": 1, "valid": 1, "played": 1}}
    assert row["levels"] == {"1": {"proposed": 1, "valid": 1, "played": 1},
                             "2": {"proposed": 1, "valid": 1, "played": 1}}
    details = sorted((json.loads(p.read_text()) for p in run_dir.glob("envs/*.json")),
                     key=lambda d: d["skill"])
    assert [(d["skill"], d["level"], d["repairs"]) for d in details] == [
        ("alpha", 1, 0), ("beta", 2, 0)]
    prompts = plugin.backends[0].designer_prompts
    assert any("Skill: alpha. LEVEL 1 of 3." in p[-1]["content"] for p in prompts)
    assert any("Skill: beta. LEVEL 2 of 3." in p[-1]["content"] for p in prompts)


@pytest.mark.parametrize("name", ["reasoning", "tool-use"])
def test_the_built_in_families_pass_the_contract_check(name):
    import plugins.families.plugin as families_plugin
    from spade_core.testing import check_component, load_test_plugins

    check_component(load_test_plugins(families_plugin), "env_family", name)


def test_the_contract_check_catches_a_target_outside_the_skills():
    from spade_core.testing import check_component, load_test_plugins

    class FakeStrayFamily(FakeSkilledFamily):
        def design_target(self, n):
            return DesignTarget(skill="gamma")

    class FakeStrayPlugin:
        @hookimpl
        def register_env_families(self, register):
            register("stray", lambda options, context: FakeStrayFamily())

    with pytest.raises(AssertionError, match="'gamma'"):
        check_component(load_test_plugins(FakeStrayPlugin()), "env_family", "stray")


GAMES = ["mathematical-reasoning", "logical-deduction", "spatial-reasoning",
         "pattern-recognition", "optimization", "causal-inference"]


def test_active_skills_follow_the_reference_hand_example():
    from plugins.families.steering import active_skills

    # n=6, k=3, interval 4: iterations 0-3 the first three, 4-7 the last three, 8-11 again.
    windows = [active_skills(GAMES, 3, iteration // 4) for iteration in range(12)]
    assert windows[:4] == [GAMES[:3]] * 4
    assert windows[4:8] == [GAMES[3:]] * 4
    assert windows[8:] == [GAMES[:3]] * 4
    # k=4 of 6 wraps round: window 1 starts at 4 and takes 4, 5, 0, 1.
    assert active_skills(GAMES, 4, 1) == [GAMES[4], GAMES[5], GAMES[0], GAMES[1]]
    assert active_skills(GAMES, 0, 7) == GAMES and active_skills(GAMES[:2], 2, 5) == GAMES[:2]


def test_the_games_skill_set_rotates_per_window_through_the_family():
    import plugins.families.plugin as families_plugin
    from spade_core.testing import load_test_plugins

    registry = load_test_plugins(families_plugin).registry
    component = registry.components[("env_family", "reasoning")]
    options = ReasoningOptions(skill_set="games", skills_per_window=3, difficulty="medium")
    family = component.build(options, context=None)
    assert family.skills == tuple(GAMES)
    # Eight proposals per window: the i-th gets active[i mod 3].
    skills = [family.windowed_target(8 * w + i, w, i).skill for w in range(3) for i in range(8)]
    first, second = GAMES[:3], GAMES[3:]
    assert skills == ([first[i % 3] for i in range(8)] + [second[i % 3] for i in range(8)]
                      + [first[i % 3] for i in range(8)])
    target = family.windowed_target(0, 0, 0)
    assert "DIFFICULTY: medium" in family.target_brief(target)
    prompt = FullProgram(FullProgramOptions()).build(DOC, family, PromptExamples(), target)
    assert "SKILL: mathematical-reasoning" in prompt[-1]["content"]
    assert "DIFFICULTY: medium" in prompt[-1]["content"]
    # Without skills_per_window the per-proposal rotation stays, whatever the window.
    plain = ReasoningFamily()
    assert plain.windowed_target(5, 9, 0) == plain.design_target(5)


def test_weighted_task_types_draw_3_2_1_1_reproducibly():
    from collections import Counter

    from plugins.families.steering import REFERENCE_DOMAINS

    family = ToolUseFamily(variant_draw="weighted", domains=list(REFERENCE_DOMAINS), seed=7)
    targets = [family.design_target(n) for n in range(7000)]
    counts = Counter(t.variant["task_type"] for t in targets)
    shares = {k: v / 7000 for k, v in counts.items()}
    for task_type, weight in {"execute": 3, "read-then-write": 2, "missing-parameter": 1,
                              "irrelevant": 1}.items():
        assert abs(shares[task_type] - weight / 7) < 0.02, shares
    domains = Counter(t.variant["domain"] for t in targets)
    assert set(domains) == set(REFERENCE_DOMAINS) and min(domains.values()) > 550
    again = ToolUseFamily(variant_draw="weighted", domains=list(REFERENCE_DOMAINS), seed=7)
    assert [again.design_target(n) for n in range(50)] == targets[:50]
    other = ToolUseFamily(variant_draw="weighted", domains=list(REFERENCE_DOMAINS), seed=8)
    assert [other.design_target(n) for n in range(50)] != targets[:50]


def test_the_loop_passes_the_window_and_position_to_the_family(tmp_path):
    calls = []

    class FakeWindowedFamily(FakeSkilledFamily):
        def windowed_target(self, n, window, position):
            calls.append((n, window, position))
            return self.design_target(n)

    plugin = FakeSelfPlayPlugin(texts=["doc one", "doc two", "doc three"],
                                family=FakeWindowedFamily)
    one_iteration(tmp_path, plugin, envs_per_iteration=3)
    assert calls == [(0, 0, 0), (1, 0, 1), (2, 0, 2)]
