"""Fixtures of the corpus-sampler tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.corpora import write_numbered_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A corpus of twelve numbered documents (``fakes.corpora``)."""
    return write_numbered_corpus(tmp_path / "c.jsonl")
