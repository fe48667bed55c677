"""The ``full-program`` prompt strategy: the prompt carries the document and the memory's
examples; extraction takes the parseable environment block."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

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


def _extract_by_parsing_every_block(completion: str) -> str | None:
    """The rule of ``extract_program`` written plainly (every Env block parsed, longest first):
    the reference its shortcut must agree with."""
    import ast

    from plugins.designer.full_program import _ENV_CLASS, program_candidates

    candidates = program_candidates(completion)
    for code in sorted(candidates, key=len, reverse=True):
        if _ENV_CLASS.search(code):
            try:
                ast.parse(code)
            except SyntaxError:
                continue
            return code + "\n"
    return max(candidates, key=len) + "\n" if candidates else None


_BLOCKS = st.sampled_from([
    "class AEnv:\n    pass", "class AEnv(:\n    pass", "class BEnv:\n    x = 1\n    y = 2",
    "class BEnv:\n    x = (1\n    y = 2", "import random", "print(1)", "def f(:", "x = 1",
    "class Helper:\n    pass", "class LongerEnv:\n    def reset(self):\n        return 'x', {}",
])


@given(st.lists(_BLOCKS, max_size=4), st.booleans())
@example(["class AEnv:\n    pass", "class Helper:\n    pass"], True)  # the Env block is shorter
@example(["class AEnv(:\n    pass", "x = 1"], True)  # the only Env block, longest, unparsable
@example(["class AEnv:\n    pass", "class BEnv:\n    x = (1\n    y = 2"], True)
@example(["class LongerEnv:\n    def reset(self):\n        return 'x', {}"], False)
def test_extract_program_skips_the_parse_only_where_it_changes_nothing(blocks, fenced):
    """Whether the only Env block is also the longest parses or not, it is what comes out; with
    several candidates the first that parses, longest first, as before the shortcut."""
    from plugins.designer.full_program import extract_program

    completion = ("Some words.\n" + "".join(f"```python\n{b}\n```\n" for b in blocks)) \
        if fenced else "\n".join(blocks)
    assert extract_program(completion) == _extract_by_parsing_every_block(completion)
