"""Where a sampler's path points: the bundled grounding corpus (its documents, topics and
licence) and local paths resolved against the working directory."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from plugins.corpora.jsonl import JsonlSampler
from plugins.corpora.options import JsonlOptions
from plugins.corpora.paths import BUNDLED_CORPUS, BUNDLED_NAME, resolve_path
from spade_core.errors import ConfigError

TOPICS = {"math", "logic", "algorithms", "cognition", "tool-use"}


def entries() -> list[dict]:
    with BUNDLED_CORPUS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_bundled_corpus_has_200_documents_with_unique_ids() -> None:
    rows = entries()
    assert len(rows) >= 200
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids), [i for i, n in Counter(ids).items() if n > 1]
    assert all(set(r) == {"id", "topic", "text"} for r in rows)


def test_bundled_documents_are_short_and_cover_every_topic() -> None:
    rows = entries()
    lengths = [len(r["text"].split()) for r in rows]
    assert min(lengths) >= 60 and max(lengths) <= 150
    counts = Counter(r["topic"] for r in rows)
    assert set(counts) == TOPICS
    assert min(counts.values()) >= 30
    texts = [r["text"] for r in rows]
    assert len(set(texts)) == len(texts)


def test_bundled_corpus_loads_through_the_sampler_with_topics() -> None:
    sampler = JsonlSampler(JsonlOptions(), seed=0)
    assert len(sampler) == len(entries())
    docs = sampler.sample(5)
    assert all(d.meta["topic"] in TOPICS and d.text for d in docs)


def test_licence_file_ships_next_to_the_corpus() -> None:
    licence = (BUNDLED_CORPUS.parent / "LICENSE.md").read_text(encoding="utf-8")
    assert "Apache" in licence and "CC0" in licence and "original work" in licence


def test_resolve_path_gives_the_default_for_none_or_the_bundled_name(tmp_path: Path,
                                                                     monkeypatch) -> None:
    assert resolve_path(None, default=BUNDLED_CORPUS) == BUNDLED_CORPUS
    assert resolve_path(BUNDLED_NAME, default=BUNDLED_CORPUS) == BUNDLED_CORPUS
    monkeypatch.chdir(tmp_path)
    assert resolve_path("sub/c.jsonl") == tmp_path / "sub" / "c.jsonl"
    assert resolve_path("~/c.jsonl") == Path.home() / "c.jsonl"
    assert resolve_path(str(tmp_path / "abs")) == tmp_path / "abs"


def test_resolve_path_refuses_no_path_without_a_default_and_unknown_bundled_names() -> None:
    with pytest.raises(ConfigError, match="the folder sampler needs a path"):
        resolve_path(None, what="folder")
    with pytest.raises(ConfigError, match="unknown bundled corpus 'bundled:other'; the only one "
                                          "is 'bundled:grounding'"):
        resolve_path("bundled:other", default=BUNDLED_CORPUS)
