"""Options of the corpus samplers: strict (unknown keys and bad values refused), normalised
extensions, and the defaults."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from plugins.corpora.options import FolderOptions, JsonlOptions


def test_options_are_strict() -> None:
    with pytest.raises(ValidationError):
        JsonlOptions.model_validate({"pathh": "x.jsonl"})
    with pytest.raises(ValidationError):
        JsonlOptions.model_validate({"max_words": 0})
    with pytest.raises(ValidationError):
        JsonlOptions.model_validate({"sampling": "random"})


def test_extension_option_is_validated() -> None:
    assert FolderOptions(extensions=["TXT", ".Md"]).extensions == [".txt", ".md"]
    with pytest.raises(ValidationError):
        FolderOptions(extensions=["."])
    with pytest.raises(ValidationError):
        FolderOptions(extensions=[])


def test_defaults() -> None:
    options = JsonlOptions()
    assert options.path is None and options.max_words == 6000 and options.seed is None
    assert options.sampling == "uniform" and options.truncation_note is False
    assert options.text_field is None and options.id_field == "id"
    assert FolderOptions().extensions == [".txt", ".md"]
