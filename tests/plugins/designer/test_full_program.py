"""The ``full-program`` prompt strategy: the prompt carries the document and the memory's
examples; extraction takes the parseable environment block."""

from __future__ import annotations

from plugins.designer.full_program import FullProgram
from plugins.designer.options import FullProgramOptions
from spade_core.interfaces import EnvRecord, PromptExamples
from spade_core.records import Document

from fakes.selfplay import FakeFamily

DOC = Document(id="d1", text="The Euclidean algorithm finds the greatest common divisor.")


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
