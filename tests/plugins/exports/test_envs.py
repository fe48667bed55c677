"""A run's environments as rows, written by ``spade envs export`` as JSONL (with a status filter;
a folder not empty is refused) and as a ``datasets`` dataset that loads with ``datasets``."""

from __future__ import annotations

import json

from fakes.exported_envs import export as _export


def test_jsonl_holds_the_playable_records(run_dir, tmp_path):
    assert _export(run_dir, tmp_path / "j", "jsonl") == 0
    rows = [json.loads(line) for line in
            (tmp_path / "j" / "environments.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and {r["status"] for r in rows} == {"frontier"}
    assert {r["family"] for r in rows} == {"reasoning", "tool-use"}
    assert all(r["source"] and r["instructions"] for r in rows)
    assert _export(run_dir, tmp_path / "r", "jsonl", "--status", "rejected") == 0
    rejected = (tmp_path / "r" / "environments.jsonl").read_text().splitlines()
    assert len(rejected) == 1 and "BrokenEnv" in rejected[0]
    assert _export(run_dir, tmp_path / "r", "jsonl") == 2  # the folder is not empty now


def test_hf_dataset_loads_with_datasets(run_dir, tmp_path):
    from datasets import load_from_disk

    assert _export(run_dir, tmp_path / "d", "hf-dataset", "--family", "reasoning") == 0
    dataset = load_from_disk(str(tmp_path / "d"))
    assert len(dataset) == 2 and set(dataset["family"]) == {"reasoning"}
    assert "source" in dataset.column_names and "class" in dataset[0]["source"]
    assert _export(run_dir, tmp_path / "e", "hf-dataset", "--status", "mastered") == 0
    assert len(load_from_disk(str(tmp_path / "e"))) == 0
