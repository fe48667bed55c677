"""Options of the built-in designer prompt strategies (config section ``designer``):
``full-program``, ``skeleton`` and ``ladder``. Light at import: pydantic only."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

_DOCUMENT_CHARS = ("grounding text shown, in characters (whitespace collapsed); null or 0: the "
                   "whole document as the corpus gives it (cut at corpus.options.max_words), as "
                   "the reference shows it")


def _whole_or_at_least_200(value: int | None) -> int | None:
    if value not in (None, 0) and value < 200:
        raise ValueError("document_chars: give at least 200 characters, or null/0 for the "
                         "whole document")
    return value


class FullProgramOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    document_chars: int | None = Field(default=3000, ge=0, description=_DOCUMENT_CHARS)
    example_chars: int = Field(default=1500, ge=0, description="characters per memory example")

    _chars = field_validator("document_chars")(_whole_or_at_least_200)


class SkeletonOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    document_chars: int | None = Field(default=1500, ge=0, description=_DOCUMENT_CHARS)
    max_value_chars: int = Field(default=2000, ge=1, description="longest value kept per part")

    _chars = field_validator("document_chars")(_whole_or_at_least_200)


class LadderOptions(BaseModel):
    """The ``ladder`` strategy has no options: its rollout count and threshold are the memory's."""

    model_config = ConfigDict(extra="forbid")
