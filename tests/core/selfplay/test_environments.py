"""Environments played again and retired (spade_core.selfplay.environments), in the frontier
schedule, with the real process sandbox and the real FAISS memory: an environment proposed once
is played again in later iterations, its statistics accumulate until it is mastered, it leaves
the frontier, and a later near-duplicate proposal of it is refused by the memory's embedding
dedupe. The agent is a scripted test fake whose success on an environment rises with the number
of episodes of it it has played."""

from __future__ import annotations

import json

import pytest

from spade_core.records import EnvStatus

from fakes.selfplay import replay_run

_run = replay_run


@pytest.mark.slow
def test_replayed_environments_become_mastered_and_their_near_duplicates_are_refused(tmp_path):
    run_dir, rows = _run(tmp_path)
    assert [r["envs_replayed"] for r in rows] == [0, 1, 1]
    assert [r["envs_mastered"] for r in rows] == [0, 1, 1]
    assert [r["envs_mastered_total"] for r in rows] == [0, 1, 2]
    assert rows[0]["frontier_size"] == 1 and rows[1]["frontier_size"] == 1
    assert rows[2]["envs_duplicate"] == 1 and rows[2]["dedupe_hits"] == 1
    replays = [json.loads(line) for line in (run_dir / "replays.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in replays] == [1, 2]
    assert all(r["status"] == EnvStatus.MASTERED for r in replays)
    assert replays[0]["unhinted_rewards"] == [1.0, 1.0]  # learned by practice, not by the hint
    first = json.loads((run_dir / "envs" / f"{replays[0]['id']}.json").read_text())
    assert first["iteration"] == 0 and first["designer_completion"]  # the proposal is kept
    refused = [json.loads(p.read_text()) for p in (run_dir / "envs").glob("*.json")]
    [duplicate] = [e for e in refused if e["status"] == "duplicate"]
    assert duplicate["duplicate_of"] == replays[0]["id"]
    assert duplicate["duplicate_similarity"] < 1.0  # by embedding, not the same program


@pytest.mark.slow
def test_an_environment_past_its_age_retires(tmp_path):
    _, rows = _run(tmp_path, replay_max_age=1)
    assert all(r["envs_replayed"] == 0 for r in rows)
    assert [r["envs_retired"] for r in rows] == [1, 1, 1]
    assert all(r["frontier_size"] == 0 for r in rows)
