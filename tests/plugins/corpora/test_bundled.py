"""The bundled grounding corpus, the plugin's registration, and its light import."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

from plugins.corpora.jsonl import JsonlSampler
from plugins.corpora.options import JsonlOptions
from plugins.corpora.paths import BUNDLED_CORPUS
from spade_core.components import BuildContext

TOPICS = {"math", "logic", "algorithms", "cognition", "tool-use"}


def records() -> list[dict]:
    with BUNDLED_CORPUS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_bundled_corpus_has_200_documents_with_unique_ids() -> None:
    rows = records()
    assert len(rows) >= 200
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids), [i for i, n in Counter(ids).items() if n > 1]
    assert all(set(r) == {"id", "topic", "text"} for r in rows)


def test_bundled_documents_are_short_and_cover_every_topic() -> None:
    rows = records()
    lengths = [len(r["text"].split()) for r in rows]
    assert min(lengths) >= 60 and max(lengths) <= 150
    counts = Counter(r["topic"] for r in rows)
    assert set(counts) == TOPICS
    assert min(counts.values()) >= 30
    texts = [r["text"] for r in rows]
    assert len(set(texts)) == len(texts)


def test_bundled_corpus_loads_through_the_sampler_with_topics() -> None:
    sampler = JsonlSampler(JsonlOptions(), seed=0)
    assert len(sampler) == len(records())
    docs = sampler.sample(5)
    assert all(d.meta["topic"] in TOPICS and d.text for d in docs)


def test_licence_file_ships_next_to_the_corpus() -> None:
    licence = (BUNDLED_CORPUS.parent / "LICENSE.md").read_text(encoding="utf-8")
    assert "Apache" in licence and "CC0" in licence and "original work" in licence


def test_plugin_registers_three_samplers_through_its_entry_point() -> None:
    from spade_core.plugins import load_plugins

    loaded = load_plugins()
    corpora = next(p for p in loaded.plugins if p.name == "corpora")
    assert corpora.error is None and corpora.hooks == ["register_corpus_samplers"]
    names = {n for n in loaded.registry.names("corpus_sampler")}
    assert {"jsonl", "folder", "hf-dataset"} <= names
    component = loaded.registry.resolve("corpus_sampler", "jsonl", "corpus.plugin")
    sampler = component.build(component.options(), BuildContext(seed=1))
    assert len(sampler) >= 200


def test_importing_the_plugin_stays_light() -> None:
    code = ("import sys, plugins.corpora.plugin; "
            "heavy = [m for m in ('datasets', 'pyarrow', 'torch', 'transformers') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_every_sampler_passes_the_component_contract_check(tmp_path) -> None:
    import plugins.corpora.plugin as corpora_plugin
    from plugins.corpora.options import FolderOptions, HfDatasetOptions
    from spade_core.interfaces import CorpusSampler
    from spade_core.testing import check_component, load_test_plugins

    loaded = load_test_plugins(corpora_plugin)
    (tmp_path / "a.txt").write_text("some words")
    (tmp_path / "c.jsonl").write_text('{"text": "more words"}\n')
    built = [
        check_component(loaded, "corpus_sampler", "jsonl"),
        check_component(loaded, "corpus_sampler", "folder", FolderOptions(path=str(tmp_path))),
        check_component(loaded, "corpus_sampler", "hf-dataset", HfDatasetOptions(
            path=str(tmp_path / "c.jsonl"), cache_dir=str(tmp_path / "cache"))),
    ]
    for sampler in built:
        assert isinstance(sampler, CorpusSampler)
        assert len(sampler.sample(3)) == 3
