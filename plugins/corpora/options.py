"""Options of the corpus samplers, validated from the ``corpus.options`` section of a run config.

Every field is documented in ``docs/corpora.md``. Unknown keys are errors (``extra="forbid"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: How documents are drawn: ``uniform`` with replacement (the SPADE reference) or ``shuffle``
#: (every document once per epoch, in a fresh seeded order each epoch).
Sampling = Literal["uniform", "shuffle"]


class SamplerOptions(BaseModel):
    """Options every corpus sampler takes."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None,
        description="file or folder to read; relative paths are resolved against the current "
                    "working directory",
    )
    max_words: int | None = Field(
        default=6000, ge=1,
        description="truncate each document to this many whitespace-separated words (SPADE: 6000 "
                    "for games, 4000 for tool use); null keeps documents whole",
    )
    truncation_note: bool = Field(
        default=False,
        description="after a cut, add a line '[Document truncated at ~N words]' (the reference "
                    "does)",
    )
    seed: int | None = Field(
        default=None,
        description="seed of the draw order; null uses the run seed (run.seed)",
    )
    sampling: Sampling = Field(
        default="uniform",
        description="'uniform': each document drawn uniformly with replacement; 'shuffle': epochs "
                    "without replacement",
    )


class _FieldOptions(SamplerOptions):
    text_field: str | None = Field(
        default=None, min_length=1,
        description="record field holding the document text; null tries 'text', then 'orig_doc'",
    )
    id_field: str = Field(
        default="id", min_length=1,
        description="record field holding the document id; records without it are named by "
                    "their position",
    )


class JsonlOptions(_FieldOptions):
    """Options of the ``jsonl`` sampler. ``path`` defaults to the bundled grounding corpus."""

    text_field: str | list[str] | None = Field(
        default=None,
        description="record field holding the document text; a list is a precedence: the "
                    "first field with non-blank text wins, e.g. [orig_doc, text] as the "
                    "reference; null takes 'text' if present, else 'orig_doc'",
    )
    on_bad_line: Literal["error", "skip"] = Field(
        default="error",
        description="a line that is not UTF-8, not a JSON object, or has no string text field: "
                    "'error' stops with its line number; 'skip' leaves it out and counts it "
                    "(skipped_lines in the sampler state and in metrics.jsonl's corpus_state)",
    )

    @field_validator("text_field")
    @classmethod
    def _fields(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and (not value or any(not f for f in value)):
            raise ValueError("text_field: give a non-empty list of non-empty field names")
        if isinstance(value, str) and not value:
            raise ValueError("text_field: give a field name or null")
        return value


class FolderOptions(SamplerOptions):
    """Options of the ``folder`` sampler: every matching file under ``path`` is one document."""

    extensions: list[str] = Field(
        default_factory=lambda: [".txt", ".md"], min_length=1,
        description="file name endings to read (case-insensitive)",
    )
    include_hidden: bool = Field(
        default=False, description="also read files and folders whose name starts with '.'",
    )

    @field_validator("extensions")
    @classmethod
    def _dotted(cls, value: list[str]) -> list[str]:
        cleaned = []
        for ext in value:
            ext = ext.strip().lower()
            if not ext or ext == ".":
                raise ValueError("extensions must be non-empty, e.g. '.txt'")
            cleaned.append(ext if ext.startswith(".") else "." + ext)
        return cleaned


class HfDatasetOptions(_FieldOptions):
    """Options of the ``hf-dataset`` sampler. ``path`` is required and must be local."""

    split: str | None = Field(
        default=None,
        description="split of a DatasetDict; null takes 'train', or the only split there is",
    )
    builder: str | None = Field(
        default=None, min_length=1,
        description="datasets builder for a data file ('json', 'parquet', 'csv', 'text', "
                    "'arrow'); null infers it from the file name; ignored for save_to_disk folders",
    )
    cache_dir: str | None = Field(
        default=None,
        description="where datasets caches a data file converted to Arrow; null uses the "
                    "datasets default (~/.cache/huggingface/datasets)",
    )


class NoCorpusOptions(BaseModel):
    """The ``none`` corpus takes no options."""

    model_config = ConfigDict(extra="forbid")
