"""Every key a run writes (metrics.jsonl, envs/, replays.jsonl, summary.json) is documented in
docs/run-files.md: a three-iteration frontier run with the real process sandbox and the real
FAISS memory and a scripted agent."""

from __future__ import annotations

import json

import pytest


from fakes.selfplay import replay_run


_run = replay_run


@pytest.mark.slow
def test_every_key_a_run_writes_is_documented_in_run_files(tmp_path):
    from fakes.cli import ROOT

    doc = (ROOT / "docs" / "run-files.md").read_text()
    run_dir, rows = _run(tmp_path)

    def section(title: str) -> str:
        return doc.split(f"## {title}", 1)[1].split("\n## ", 1)[0]

    def undocumented(keys, title):
        return sorted(k for k in keys if f"`{k}`" not in section(title))

    replays = [json.loads(line) for line in (run_dir / "replays.jsonl").read_text().splitlines()]
    envs = [json.loads(p.read_text()) for p in (run_dir / "envs").glob("*.json")]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert replays and envs and rows
    assert undocumented({k for r in rows for k in r}, "`metrics.jsonl`") == []
    assert undocumented({k for r in rows for k in r["pipeline"]}, "`metrics.jsonl`") == []
    assert undocumented({k for r in rows for k in r["seconds"]}, "`metrics.jsonl`") == []
    assert undocumented({k for e in envs for k in e}, "`envs/<id>.py` and `envs/<id>.json`") == []
    assert undocumented({k for r in replays for k in r}, "`replays.jsonl`") == []
    assert undocumented(summary, "`summary.json`") == []
    difficulty = {k for r in replays + envs if r["difficulty"] for k in r["difficulty"]}
    assert difficulty == {"figures", "designer_reward", "train", "regret"}
    assert undocumented(difficulty, "`replays.jsonl`") == []
