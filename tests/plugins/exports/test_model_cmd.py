"""``spade export-model``: its options reach the export and its result is printed as a line or as
JSON, the base model on stderr. (The export itself: test_model_export.py.)"""

from __future__ import annotations

import json

from spade_core.cli import main

import plugins.exports.model_export as model_export


def test_options_reach_the_export_and_the_result_is_printed(monkeypatch, tmp_path, capsys):
    calls = []

    def fake_export(run_dir, out, **options):
        calls.append((run_dir, out, options))
        return {"kind": "merged model", "checkpoint": "iter-000002", "out": out,
                "base_model": "tiny-base"}

    monkeypatch.setattr(model_export, "export_model", fake_export)
    out = str(tmp_path / "out")
    assert main(["export-model", "run", "--out", out, "--merge", "--checkpoint", "1",
                 "--json"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["checkpoint"] == "iter-000002"
    assert "# base model: tiny-base" in printed.err
    assert calls == [("run", out, {"merge": True, "checkpoint": 1, "model": None})]
    assert main(["export-model", "run", "--out", out, "--model", "other"]) == 0
    assert capsys.readouterr().out == f"exported merged model from iter-000002 to {out}\n"
    assert calls[-1][2] == {"merge": False, "checkpoint": None, "model": "other"}


def test_a_damaged_checkpoint_is_refused_naming_the_file_before_any_model_loads(tmp_path,
                                                                                 capsys):
    from fakes.checkpoints import WEIGHTS, cut_short, write_checkpoints

    run = tmp_path / "run"
    first, latest = write_checkpoints(run, 1, 2)
    cut_short(latest / WEIGHTS)
    out = tmp_path / "out"
    assert main(["export-model", str(run), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"checkpoint {latest} is damaged ({WEIGHTS} has 10 bytes, 1000 when written)" in err
    assert f"the newest intact checkpoint of the run is {first}" in err
    assert not out.exists()  # refused before anything was written
    assert main(["export-model", str(run), "--out", str(out), "--checkpoint", "1"]) == 1
    assert f"checkpoint {latest} is damaged" in capsys.readouterr().err
