"""spade_core/eval/run.py: what ``spade eval`` and ``spade_core.evaluate`` return: the suites
chosen (flags over ``eval.*``), the JSON result, a baseline read from an earlier result, and
usage errors before anything plays."""

from __future__ import annotations

import json

import pytest

from spade_core.errors import UsageError
from spade_core.eval.run import run_eval

from fakes.eval_config import known_config


def test_the_result_names_the_config_the_settings_and_the_scores():
    resolved, registry = known_config(right=1, eval={"suites": ["known"]})
    run = run_eval(resolved, registry, config_label="known.yaml")
    payload = run.payload
    assert payload["config"] == "known.yaml" and payload["checkpoint"] is None
    assert [s["suite"] for s in payload["suites"]] == ["known"]
    assert payload["suites"][0]["overall"]["pass_at_1"] == 0.25
    assert payload["settings"]["samples"] == 1 and "checkpoint_folder" not in payload["settings"]
    assert run.baseline is None and "baseline" not in payload


def test_a_baseline_file_is_read_and_shown_beside(tmp_path):
    resolved, registry = known_config(right=1)
    first = run_eval(resolved, registry, config_label="k", suites=["known"])
    path = tmp_path / "first.json"
    path.write_text(json.dumps(first.payload))
    better, registry = known_config(right=4)
    second = run_eval(better, registry, config_label="k", suites=["known"], baseline=path)
    assert second.payload["baseline"]["source"] == str(path)
    assert second.baseline[0].overall.pass_at_1 == 0.25
    assert second.results[0].overall.pass_at_1 == 1.0


def test_usage_errors_come_before_anything_plays():
    resolved, registry = known_config(right=0)
    with pytest.raises(UsageError, match="at least 1"):
        run_eval(resolved, registry, config_label="k", suites=["known"], limit=0)
    with pytest.raises(UsageError, match="options for suite 'other', which is not selected"):
        run_eval(resolved, registry, config_label="k", suites=["known"],
                 options={"other": {"x": 1}})
