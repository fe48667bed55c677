"""The corpora plugin: three samplers registered through its entry point, each passing the
component contract check, the run seed taken unless the options set one, and a light import."""

from __future__ import annotations

from pathlib import Path

from plugins.corpora.options import JsonlOptions
from plugins.corpora.plugin import build_jsonl
from spade_core.components import BuildContext

from fakes.corpora import ids
from fakes.commands import loaded_by


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
    assert loaded_by("plugins.corpora.plugin",
                     ("datasets", "pyarrow", "torch", "transformers")) == []


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


def test_factory_takes_the_run_seed_unless_options_set_one(corpus: Path) -> None:
    from_run = build_jsonl(JsonlOptions(path=str(corpus)), BuildContext(seed=11))
    explicit = build_jsonl(JsonlOptions(path=str(corpus), seed=11), BuildContext(seed=99))
    other = build_jsonl(JsonlOptions(path=str(corpus)), BuildContext(seed=12))
    assert from_run.seed == explicit.seed == 11
    assert ids(from_run.sample(20)) == ids(explicit.sample(20)) != ids(other.sample(20))
