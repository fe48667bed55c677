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
