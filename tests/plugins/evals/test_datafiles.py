"""Data without downloads: ``eval.data.<suite>`` reaches a suite as its ``data`` option (through
``spade eval``, the in-run evaluation and the contamination guard), the reader takes the public
datasets' file formats, a ``save_to_disk`` folder and the local datasets cache only, and every
missing location fails naming what is missing and where to get it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spade_core.cli import main
from spade_core.config.schema import EvalSection
from spade_core.errors import ConfigError
from spade_core.eval.evaluate import configured_options, with_data
from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.cli import ROOT
from fakes.eval_backends import with_fake_wrong_backend
from plugins.evals.datafiles import DataSource, read_rows

DATA = Path(__file__).parent / "data"
QUICKSTART = str(ROOT / "configs" / "quickstart.yaml")
SOURCE = DataSource(suite="demo", what="the demo rows", where="example.invalid/demo")


_with_fake_backend = with_fake_wrong_backend


def test_spade_eval_reads_eval_data_of_the_config(tmp_path, capsys):
    argv = ["eval", QUICKSTART, "--set", "backend=fake-wrong", "--suite", "aime", "--suite",
            "gpqa-diamond", "--set", f"eval.data.aime={DATA / 'aime'}",
            "--set", f"eval.data.gpqa-diamond={DATA / 'gpqa' / 'gpqa_diamond.csv'}", "--json"]
    assert main(argv, plugins=_with_fake_backend()) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [(s["suite"], s["overall"]["items"], s["overall"]["pass_at_1"])
            for s in printed["suites"]] == [("aime", 6, 0.0), ("gpqa-diamond", 4, 0.0)]


def test_an_option_overrides_eval_data(capsys):
    argv = ["eval", QUICKSTART, "--set", "backend=fake-wrong", "--suite", "aime",
            "--set", "eval.data.aime=/nowhere/aime", "--option",
            f"aime.data={DATA / 'aime' / 'aime_2024.jsonl'}", "--json"]
    assert main(argv, plugins=_with_fake_backend()) == 0
    assert json.loads(capsys.readouterr().out)["suites"][0]["overall"]["items"] == 2


def test_spade_eval_without_the_file_fails_naming_it(capsys):
    argv = ["eval", QUICKSTART, "--set", "backend=fake-wrong", "--suite", "gpqa-diamond",
            "--set", "eval.data.gpqa-diamond=/nowhere/gpqa_diamond.csv"]
    assert main(argv, plugins=_with_fake_backend()) == 2
    err = capsys.readouterr().err
    assert "/nowhere/gpqa_diamond.csv: no such file or folder" in err
    assert "Idavidrein/gpqa" in err


def test_eval_data_for_a_suite_without_a_data_option_is_refused():
    registry = load_test_plugins(evals_plugin).registry
    with pytest.raises(ConfigError, match="eval.data.programs: .* reads no data location"):
        with_data(registry, "programs", {"path": "x"}, "somewhere")
    assert with_data(registry, "programs", {"path": "x"}, None) == {"path": "x"}


def test_the_loop_and_the_guard_get_the_same_options():
    registry = load_test_plugins(evals_plugin).registry
    section = EvalSection(suites=["aime"], data={"aime": "a.jsonl"},
                          options={"aime": {"years": [2025]}})
    assert configured_options(registry, section, "aime") == {"years": [2025],
                                                             "data": "a.jsonl"}
    section = EvalSection(suites=["aime"], data={"aime": "a.jsonl"},
                          options={"aime": {"data": "b.jsonl"}})
    assert configured_options(registry, section, "aime") == {"data": "b.jsonl"}


def test_json_csv_and_jsonl_give_the_same_rows(tmp_path):
    rows = [{"q": "one", "a": "1"}, {"q": "two, with a comma", "a": "2"}]
    (tmp_path / "d.json").write_text(json.dumps({"data": rows}))
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "d.csv").write_text('q,a\none,1\n"two, with a comma",2\n')
    for name in ("d.json", "d.jsonl", "d.csv"):
        found = read_rows(str(tmp_path / name), SOURCE)
        assert [r.values for r in found] == rows and found[0].origin.endswith(name)
    # a folder: every data file in name order
    assert len(read_rows(str(tmp_path), SOURCE)) == 6


def test_a_save_to_disk_folder(tmp_path):
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list([{"q": "one", "a": "1"}]).save_to_disk(str(tmp_path / "saved"))
    assert [r.values for r in read_rows(str(tmp_path / "saved"), SOURCE)] == [
        {"q": "one", "a": "1"}]


def test_missing_locations_say_what_and_where(tmp_path):
    with pytest.raises(ConfigError, match="set eval.data.demo") as unset:
        read_rows(None, SOURCE)
    assert "example.invalid/demo" in str(unset.value)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ConfigError, match="holds no data file"):
        read_rows(str(tmp_path), SOURCE)
    with pytest.raises(ConfigError, match="unreadable"):
        (tmp_path / "bad.jsonl").write_text("{not json\n")
        read_rows(str(tmp_path / "bad.jsonl"), SOURCE)


def test_hf_reads_the_local_cache_only_and_restores_the_environment(tmp_path, monkeypatch):
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(ConfigError, match="not in the local datasets cache") as miss:
        read_rows("hf:spade-test/not-cached:default", SOURCE)
    assert "nothing is downloaded" in str(miss.value)
    assert "load_dataset('spade-test/not-cached', 'default')" in str(miss.value)
    assert "HF_HUB_OFFLINE" not in os.environ
