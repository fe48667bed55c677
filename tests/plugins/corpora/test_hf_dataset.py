"""The ``hf-dataset`` corpus sampler on local datasets only: save_to_disk folders, data files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugins.corpora.hf_dataset import HfDatasetSampler
from plugins.corpora.options import HfDatasetOptions
from spade_core.errors import ConfigError

datasets = pytest.importorskip("datasets")

ROWS = {
    "id": ["a", "b", "c", None],
    "text": ["alpha beta gamma delta", "", "epsilon zeta", "eta theta"],
    "topic": ["math", "logic", "math", "logic"],
}


def opts(path: Path | str, tmp_path: Path, **extra) -> HfDatasetOptions:
    return HfDatasetOptions(path=str(path), cache_dir=str(tmp_path / "hf-cache"), **extra)


def all_docs(sampler: HfDatasetSampler) -> dict[str, str]:
    return {sampler.ids[i]: sampler.document(i).text for i in range(len(sampler))}


EXPECTED = {"a": "alpha beta gamma delta", "c": "epsilon zeta", "row-3": "eta theta"}


def test_saved_dataset(tmp_path: Path) -> None:
    datasets.Dataset.from_dict(ROWS).save_to_disk(str(tmp_path / "saved"))
    sampler = HfDatasetSampler(opts(tmp_path / "saved", tmp_path, max_words=2), seed=0)
    assert sampler.ids == ["a", "c", "row-3"] and sampler.skipped_blank == 1
    doc = sampler.document(0)
    assert doc.text == "alpha beta" and doc.meta["truncated"] is True
    assert doc.meta["topic"] == "math" and doc.meta["row"] == 0


def test_saved_dataset_dict_and_split_choice(tmp_path: Path) -> None:
    full = datasets.Dataset.from_dict(ROWS)
    dd = datasets.DatasetDict({"train": full, "test": full.select([2])})
    dd.save_to_disk(str(tmp_path / "dd"))
    assert all_docs(HfDatasetSampler(opts(tmp_path / "dd", tmp_path), seed=0)) == EXPECTED
    test = HfDatasetSampler(opts(tmp_path / "dd", tmp_path, split="test"), seed=0)
    assert all_docs(test) == {"c": "epsilon zeta"}
    with pytest.raises(ConfigError, match="has no split 'dev'; it has train, test"):
        HfDatasetSampler(opts(tmp_path / "dd", tmp_path, split="dev"), seed=0)
    no_train = datasets.DatasetDict({"a": full, "b": full})
    no_train.save_to_disk(str(tmp_path / "nt"))
    with pytest.raises(ConfigError, match="has splits a, b; choose one"):
        HfDatasetSampler(opts(tmp_path / "nt", tmp_path), seed=0)


def test_split_given_for_a_single_dataset(tmp_path: Path) -> None:
    datasets.Dataset.from_dict(ROWS).save_to_disk(str(tmp_path / "saved"))
    with pytest.raises(ConfigError, match="single dataset, not splits"):
        HfDatasetSampler(opts(tmp_path / "saved", tmp_path, split="train"), seed=0)


def test_parquet_and_jsonl_files_and_a_folder_of_files(tmp_path: Path) -> None:
    datasets.Dataset.from_dict(ROWS).to_parquet(str(tmp_path / "d.parquet"))
    assert all_docs(HfDatasetSampler(opts(tmp_path / "d.parquet", tmp_path), seed=0)) == EXPECTED
    folder = tmp_path / "shards"
    folder.mkdir()
    lines = [json.dumps({"id": i, "orig_doc": t, "topic": p})
             for i, t, p in zip(ROWS["id"], ROWS["text"], ROWS["topic"])]
    (folder / "part-0.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (folder / "part-1.jsonl").write_text("\n".join(lines[2:]) + "\n")
    one = HfDatasetSampler(opts(folder / "part-0.jsonl", tmp_path), seed=0)
    assert all_docs(one) == {"a": "alpha beta gamma delta"}
    both = HfDatasetSampler(opts(folder, tmp_path, builder="json"), seed=0)
    assert all_docs(both) == EXPECTED
    inferred = HfDatasetSampler(opts(folder, tmp_path), seed=0)
    assert all_docs(inferred) == EXPECTED


def test_builder_needed_for_unknown_suffix(tmp_path: Path) -> None:
    (tmp_path / "data.dat").write_text('{"text": "x"}\n')
    with pytest.raises(ConfigError, match="cannot tell which datasets builder reads data.dat"):
        HfDatasetSampler(opts(tmp_path / "data.dat", tmp_path), seed=0)
    sampler = HfDatasetSampler(opts(tmp_path / "data.dat", tmp_path, builder="json"), seed=0)
    assert all_docs(sampler) == {"row-0": "x"}


def test_hub_names_are_refused_not_downloaded(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        HfDatasetSampler(opts("HuggingFaceFW/fineweb", tmp_path), seed=0)
    message = str(info.value)
    assert "no such local file or folder" in message and "never downloads" in message
    assert "save_to_disk" in message


def test_path_is_required(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a path"):
        HfDatasetSampler(HfDatasetOptions(), seed=0)


def test_text_column_missing_or_not_text(tmp_path: Path) -> None:
    datasets.Dataset.from_dict({"body": ["x"], "n": [3]}).save_to_disk(str(tmp_path / "s"))
    with pytest.raises(ConfigError, match=r"no 'text' or 'orig_doc' column \(columns: body, n\)"):
        HfDatasetSampler(opts(tmp_path / "s", tmp_path), seed=0)
    assert all_docs(HfDatasetSampler(opts(tmp_path / "s", tmp_path, text_field="body"),
                                     seed=0)) == {"row-0": "x"}
    with pytest.raises(ConfigError, match="column 'n' must hold strings"):
        HfDatasetSampler(opts(tmp_path / "s", tmp_path, text_field="n"), seed=0)


def test_empty_dataset(tmp_path: Path) -> None:
    datasets.Dataset.from_dict({"text": ["", None, " "]}).save_to_disk(str(tmp_path / "e"))
    with pytest.raises(ConfigError, match="the corpus is empty"):
        HfDatasetSampler(opts(tmp_path / "e", tmp_path), seed=0)


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "bad.parquet").write_bytes(b"this is not parquet")
    with pytest.raises(ConfigError, match="datasets could not load it"):
        HfDatasetSampler(opts(tmp_path / "bad.parquet", tmp_path), seed=0)


def test_seeded_and_resumable(tmp_path: Path) -> None:
    rows = {"text": [f"document {i}" for i in range(9)]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "s"))

    def make() -> HfDatasetSampler:
        return HfDatasetSampler(opts(tmp_path / "s", tmp_path, sampling="shuffle"), seed=4)

    expected = [d.id for d in make().sample(20)]
    first = make()
    first.sample(11)
    resumed = make()
    resumed.load_state_dict(first.state_dict())
    assert [d.id for d in resumed.sample(9)] == expected[11:]
