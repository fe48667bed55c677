"""Options of the designer prompt strategies: defaults, unknown keys refused, and a document cut
too short to ground anything refused with a message that says what to give."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from plugins.designer.options import FullProgramOptions, SkeletonOptions


def test_defaults():
    assert FullProgramOptions().document_chars == 3000
    assert FullProgramOptions().example_chars == 1500
    assert SkeletonOptions().document_chars == 1500
    assert SkeletonOptions().max_value_chars == 2000


@pytest.mark.parametrize("model", [FullProgramOptions, SkeletonOptions])
def test_document_chars_is_the_whole_document_or_at_least_200(model):
    assert model(document_chars=None).document_chars is None
    assert model(document_chars=0).document_chars == 0
    assert model(document_chars=200).document_chars == 200
    with pytest.raises(ValidationError, match="give at least 200 characters, or null/0"):
        model(document_chars=199)
    with pytest.raises(ValidationError):
        model(document_chars=-1)


@pytest.mark.parametrize("model", [FullProgramOptions, SkeletonOptions])
def test_unknown_keys_are_refused(model):
    with pytest.raises(ValidationError, match="extra"):
        model.model_validate({"document_char": 500})
