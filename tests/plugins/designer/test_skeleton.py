"""The ``skeleton`` prompt strategy: the prompt lists the family's slots; extraction fills them as
string literals only (safe), or takes a completed code template."""

from __future__ import annotations

import ast

import pytest

from plugins.designer.options import SkeletonOptions
from plugins.designer.skeleton import Skeleton, parse_values, slots
from spade_core.interfaces import NoProgram, PromptExamples
from spade_core.records import Document

from fakes.selfplay import FAKE_SKELETON, FakeFamily

DOC = Document(id="d1", text="The Euclidean algorithm finds the greatest common divisor.")


def test_skeleton_slots_and_descriptions():
    assert slots(FAKE_SKELETON) == {"QUESTION": "the question", "ANSWER": "the exact answer"}


def test_skeleton_prompt_lists_slots():
    user = Skeleton(SkeletonOptions()).build(DOC, FakeFamily(), PromptExamples())[-1]["content"]
    assert "QUESTION: <the question>" in user and "ANSWER: <the exact answer>" in user
    assert "Euclidean" in user


def test_skeleton_fills_values_as_string_literals_only():
    hostile = "x'); import os; os.system('touch /tmp/pwned'); ('"
    completion = f"QUESTION: {hostile}\nANSWER: 6\n"
    program = Skeleton(SkeletonOptions()).extract(completion, FakeFamily())
    tree = ast.parse(program)
    # No import, no call to os: the hostile value is one string constant.
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert hostile in [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    namespace = {}
    exec(compile(program, "t", "exec"), namespace)
    env = namespace["QAEnv"]()
    assert env.reset()[0] == "Question: " + hostile
    assert env.step(env.solution())[1] == 1.0


def test_skeleton_missing_slot_is_no_program_naming_the_slot():
    with pytest.raises(NoProgram, match="no line gives ANSWER"):
        Skeleton(SkeletonOptions()).extract("QUESTION: what?\n", FakeFamily())


def test_parse_values_multiline_and_markdown_bold():
    values = parse_values("**QUESTION**: line one\nline two\nANSWER: `7`", ["QUESTION", "ANSWER"])
    assert values == {"QUESTION": "line one\nline two", "ANSWER": "7"}


class CodeTemplateFamily(FakeFamily):
    def skeleton(self):
        return "class <FILL: Name>Env:\n    pass\n"


def test_skeleton_code_template_mode():
    strategy = Skeleton(SkeletonOptions())
    user = strategy.build(DOC, CodeTemplateFamily(), PromptExamples())[-1]["content"]
    assert "<FILL: Name>Env" in user and "completed program" in user
    code = strategy.extract("```python\nclass GcdEnv:\n    pass\n```", CodeTemplateFamily())
    assert code == "class GcdEnv:\n    pass\n"


def test_reasoning_slot_skeleton_makes_a_valid_program_and_refuses_leaks(tmp_path):
    from plugins.families.reasoning import ReasoningFamily
    from spade_core.records import EnvProgram

    family = ReasoningFamily()
    strategy = Skeleton(SkeletonOptions())
    good = strategy.extract("QUESTION: How many sides has a hexagon?\nANSWER: 6", family)
    leaky = strategy.extract("QUESTION: Is the answer 6 or 7? It is 6.\nANSWER: 6", family)
    paths = []
    for name, code in (("good", good), ("leaky", leaky)):
        path = tmp_path / f"{name}.py"
        path.write_text(code)
        paths.append(str(path))
    from fakes.cli import run_spade
    import json as _json

    result = run_spade("check-env", "--json", "--family", "reasoning", *paths, timeout=120)
    verdicts = [_json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert verdicts[0]["valid"] is True, verdicts[0]
    assert verdicts[1]["valid"] is False and "gives its own answer away" in verdicts[1]["message"]
    assert EnvProgram(source=good, family="reasoning").id != EnvProgram(source=leaky,
                                                                       family="reasoning").id
