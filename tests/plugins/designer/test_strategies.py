"""Designer prompt strategies: prompts carry the document and examples; extraction is safe."""

from __future__ import annotations

import ast

import plugins.designer.plugin as designer_plugin
from plugins.designer.full_program import FullProgram
from plugins.designer.options import FullProgramOptions, SkeletonOptions
from plugins.designer.skeleton import Skeleton, parse_values, slots
from spade_core.interfaces import EnvRecord, PromptExamples
from spade_core.records import Document
from spade_core.testing import check_component, load_test_plugins

from fakes.selfplay import FAKE_SKELETON, FakeFamily

DOC = Document(id="d1", text="The Euclidean algorithm finds the greatest common divisor.")


def test_both_strategies_meet_the_contract():
    loaded = load_test_plugins(designer_plugin)
    for name in ("full-program", "skeleton"):
        check_component(loaded, "prompt_strategy", name)


def test_full_program_prompt_has_document_guide_and_examples():
    good = EnvRecord(id="a", source="class GoodEnv: ...", family="fake-qa", status="frontier",
                     stats={"regret": 0.4})
    bad = EnvRecord(id="b", source="class EasyEnv: ...", family="fake-qa", status="mastered")
    messages = FullProgram(FullProgramOptions()).build(
        DOC, FakeFamily(), PromptExamples(positive=[good], negative=[bad]))
    user = messages[-1]["content"]
    assert "Euclidean algorithm" in user and "Write a question." in user
    assert "class GoodEnv" in user and "regret 0.40" in user
    assert "class EasyEnv" in user and "already mastered" in user


def test_full_program_extracts_the_parseable_env_block():
    completion = ("Here:\n```python\nclass Broken Env(:\n```\nand\n```python\nimport random\n\n"
                  "class GcdEnv:\n    def reset(self, seed=None):\n        return 'x', {}\n```")
    code = FullProgram(FullProgramOptions()).extract(completion, FakeFamily())
    assert code.startswith("import random") and "class GcdEnv" in code
    assert FullProgram(FullProgramOptions()).extract("no code at all", FakeFamily()) is None


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


def test_skeleton_missing_slot_is_no_program():
    assert Skeleton(SkeletonOptions()).extract("QUESTION: what?\n", FakeFamily()) is None


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


def test_document_chars_null_shows_the_whole_document_as_it_is():
    text = "first line\n\n" + "word " * 2000 + "\nlast line"
    doc = Document(id="d", text=text)
    whole = FullProgram(FullProgramOptions(document_chars=None)).build(
        doc, FakeFamily(), PromptExamples())[-1]["content"]
    assert text.strip() in whole
    cut = FullProgram(FullProgramOptions()).build(doc, FakeFamily(), PromptExamples())
    assert "last line" not in cut[-1]["content"]
    zero = Skeleton(SkeletonOptions(document_chars=0)).build(doc, FakeFamily(), PromptExamples())
    assert "last line" in zero[-1]["content"]


def test_an_empty_document_gives_the_no_corpus_prompt():
    from plugins.designer.prompt_parts import NO_DOCUMENT
    from plugins.families.reasoning import ReasoningFamily
    from spade_core.records import DesignTarget

    family = ReasoningFamily()
    target = DesignTarget(skill="logic", level=3)
    empty = Document(id="none:0", text="", source="none")
    for strategy in (FullProgram(FullProgramOptions()), Skeleton(SkeletonOptions())):
        user = strategy.build(empty, family, PromptExamples(), target)[-1]["content"]
        assert NO_DOCUMENT in user and "Document:" not in user
        assert "deduction from stated rules" in user  # the skill's aim
        assert "knights and knaves" in user  # and its ideas
        assert "grounded in the document" not in user and "about this document" not in user
