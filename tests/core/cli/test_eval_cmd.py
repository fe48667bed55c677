"""``spade eval`` end to end: on the bundled model (slow, small limit and few tokens), and fast
with a fake backend for the table, the JSON, --out and --baseline."""

from __future__ import annotations

import json

import pytest

from spade_core.cli import main

from fakes.eval_backends import with_fake_wrong_backend
from fakes.cli import ROOT
from fakes.commands import help_text as _help
from fakes.eval_runs import needs_bfcl


QUICKSTART = str(ROOT / "configs" / "quickstart.yaml")


_with_fake_backend = with_fake_wrong_backend


@needs_bfcl
def test_eval_json_out_and_baseline_with_a_fake_backend(tmp_path, capsys):
    plugins = _with_fake_backend()
    out = tmp_path / "first.json"
    argv = ["eval", QUICKSTART, "--set", "backend=fake-wrong", "--suite", "reasoning-gym",
            "--suite", "bfcl", "--limit", "4"]
    assert main([*argv, "--json", "--out", str(out)], plugins=plugins) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert [s["suite"] for s in printed["suites"]] == ["reasoning-gym", "bfcl"]
    assert printed["suites"][1]["overall"] == {"items": 4, "samples": 4, "pass_at_1": 0.0,
                                               "pass_at_k": 0.0, "mean_score": 0.0}
    assert main([*argv, "--baseline", str(out)], plugins=plugins) == 0
    text = capsys.readouterr().out
    assert "pass@1 baseline" in text and "delta" in text and "overall" in text


def test_eval_refuses_an_option_for_an_unselected_suite(capsys):
    status = main(["eval", QUICKSTART, "--suite", "bfcl", "--option", "programs.path=x"],
                  plugins=_with_fake_backend())
    assert status == 2 and "not selected" in capsys.readouterr().err


@pytest.mark.slow
@needs_bfcl
def test_eval_on_the_bundled_model(capsys):
    status = main(["eval", QUICKSTART, "--suite", "reasoning-gym", "--suite", "bfcl",
                   "--limit", "4", "--max-new-tokens", "8", "--json",
                   "--set", "backend.options.torch_threads=1"])
    assert status == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["model"] == "bundled:smollm2-135m"
    for suite in payload["suites"]:
        assert suite["overall"]["items"] == 4
        assert 0.0 <= suite["overall"]["pass_at_1"] <= 1.0


def test_save_replies_keeps_prompt_reply_answer_and_score_and_the_header_names_the_model(
        tmp_path, capsys):
    plugins = _with_fake_backend()
    argv = ["eval", QUICKSTART, "--set", "backend=fake-wrong", "--suite", "reasoning-gym",
            "--limit", "4", "--json"]
    assert main(argv, plugins=plugins) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "replies" not in plain["suites"][0]["items"][0]
    assert plain["scored"] == {"model": plain["model"], "checkpoint": None,
                               "save_replies": False}
    assert main([*argv, "--save-replies", "--samples", "2"], plugins=plugins) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["scored"]["save_replies"] is True
    for row in payload["suites"][0]["items"]:
        assert row["prompt"][0]["role"] == "system" and row["prompt"][1]["role"] == "user"
        assert row["replies"] == [{"reply": "\\boxed{spade-wrong-answer}",
                                   "answer": "spade-wrong-answer", "score": s}
                                  for s in row["scores"]]
        assert len(row["replies"]) == 2
    assert main(argv[:-1], plugins=plugins) == 0
    assert capsys.readouterr().out.startswith(f"scored: {plain['model']}\n")


def test_eval_help_says_what_a_baseline_may_be():
    assert "--baseline DIR|FILE|base" in _help(["eval"])


def test_eval_refuses_a_damaged_checkpoint_before_any_model_loads(tmp_path, capsys):
    from fakes.checkpoints import WEIGHTS, cut_short, write_checkpoints

    [checkpoint] = write_checkpoints(tmp_path / "run", 1)
    cut_short(checkpoint / WEIGHTS)
    for flag in ("--checkpoint", "--baseline"):
        status = main(["eval", QUICKSTART, "--set", "backend=fake-wrong", "--suite",
                       "reasoning-gym", flag, str(tmp_path / "run")],
                      plugins=_with_fake_backend())
        err = capsys.readouterr().err
        assert status == 1, err
        assert f"checkpoint {checkpoint} is damaged ({WEIGHTS} has 10 bytes" in err
        assert "the run has no intact checkpoint" in err
