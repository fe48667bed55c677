"""Dedupe (spade_core.selfplay.dedupe): a mastered environment proposed again is refused as a
duplicate, through the real loop with fakes."""

from __future__ import annotations

from fakes.selfplay import FAKE_RUN_CONFIG, make_run, metrics


def test_mastered_env_then_refused_as_duplicate(tmp_path):
    loop = dict(FAKE_RUN_CONFIG["loop"], schedule="frontier")
    run_dir, recorder = make_run(tmp_path, {"loop": loop}, always_right=True, texts=["same doc"])
    rows = metrics(run_dir)
    assert rows[0]["envs_mastered"] >= 1
    assert rows[1]["envs_duplicate"] == 2 and rows[1]["envs_played"] == 0
    assert any(e[0] == "env_mastered" for e in recorder.events)
