"""The prompt parts both strategies share: the document block (whole or cut) and the prompt
without a corpus document (the skill's aim and ideas instead)."""

from __future__ import annotations

from plugins.designer.full_program import FullProgram
from plugins.designer.options import FullProgramOptions, SkeletonOptions
from plugins.designer.skeleton import Skeleton
from spade_core.interfaces import PromptExamples
from spade_core.records import Document

from fakes.selfplay import FakeFamily


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


def test_a_one_line_negative_names_the_environment_not_its_id():
    """A designed environment has no description: the one-line negative shows its class's
    docstring (what the designer can steer away from), not a record id; a description wins, and
    a program that does not parse falls back to the id."""
    from plugins.designer.prompt_parts import examples_text
    from spade_core.records import EnvRecord

    def negative(source: str, description: str = "") -> str:
        record = EnvRecord(id="abc123", source=source, family="lab", status="mastered",
                           description=description, stats={"win_rate": 1.0})
        return examples_text(PromptExamples(negative=[record], negative_code=False), 500)

    source = 'class LabEnv:\n    """Lab environment: skill 1, difficulty 2.0, kind ordinary."""\n'
    assert negative(source) == ("Avoid tasks like: Lab environment: skill 1, difficulty 2.0, "
                                "kind ordinary. (too easy, win rate 1.00)")
    assert negative(source, "Sum two\nmore").startswith("Avoid tasks like: Sum two (")
    assert negative("class (((", "").startswith("Avoid tasks like: abc123 (")
