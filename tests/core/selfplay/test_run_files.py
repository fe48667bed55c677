"""An iteration's environments in the run directory (spade_core.selfplay.run_files): a fresh
proposal gets envs/<id>.py and envs/<id>.json, a replay a line of replays.jsonl, and a delayed
designer reward joins its environment's file."""

from __future__ import annotations

import json

from spade_core.records import Difficulty, Document, Episode, Verdict
from spade_core.selfplay.artifacts import RunArtifacts
from spade_core.selfplay.designer_reward import Delayed
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.run_files import write_iteration

from fakes.selfplay import FakeFamily


def _played(program: str, replayed: bool) -> Proposal:
    p = Proposal(index=0, family=FakeFamily(), document=Document(id="doc-1", text="six " * 10),
                 prompt=[{"role": "user", "content": "Design."}], completions=[program],
                 program=program, verdict=Verdict(True, "ok", "valid"), replayed=replayed,
                 hint="Think.")
    p.accept()
    p.unhinted = [Episode(env_id="", seed=0, hinted=False, first_observation="Q", reward=0.0)]
    p.hinted = [Episode(env_id="", seed=0, hinted=True, first_observation="Q", reward=1.0)]
    p.difficulty = Difficulty(figures={}, designer_reward=0.4, regret=1.0)
    p.designer_reward = 0.4
    return p


def test_a_fresh_proposal_gets_its_files_and_a_replay_a_line(tmp_path):
    artifacts = RunArtifacts(tmp_path)
    artifacts.create({})
    fresh, replay = _played("class A: ...", False), _played("class B: ...", True)
    write_iteration(artifacts, 2, [fresh, replay])
    assert (tmp_path / "envs" / f"{fresh.env_id}.py").read_text() == "class A: ..."
    detail = json.loads((tmp_path / "envs" / f"{fresh.env_id}.json").read_text())
    assert (detail["id"], detail["iteration"], detail["status"], detail["doc_id"]) == \
        (fresh.env_id, 2, "frontier", "doc-1")
    assert detail["doc_chars"] == 40 and detail["hint"] == "Think."
    assert detail["unhinted_rewards"] == [0.0] and detail["hinted_rewards"] == [1.0]
    assert detail["verdict"]["category"] == "ok"
    assert detail["designer_completion"] == "class A: ..."
    assert detail["difficulty"]["regret"] == 1.0 and detail["designer_reward"] == 0.4
    assert not (tmp_path / "envs" / f"{replay.env_id}.json").exists()
    [line] = (tmp_path / "replays.jsonl").read_text().splitlines()
    row = json.loads(line)
    assert row["difficulty"]["regret"] == 1.0
    assert {k: v for k, v in row.items() if k != "difficulty"} == {
        "id": replay.env_id, "iteration": 2, "family": "fake-qa", "status": "frontier",
        "hint_diagnostics": None, "hinted_rewards": [1.0], "unhinted_rewards": [0.0]}

    write_iteration(artifacts, 4, [], [Delayed(env_id=fresh.env_id, window_start=2,
                                               designer_reward=0.9, figures={"regret": 1.0},
                                               trained=False)])
    detail = json.loads((tmp_path / "envs" / f"{fresh.env_id}.json").read_text())
    assert detail["delayed"] == {"window_start": 2, "released_at": 4, "designer_reward": 0.9,
                                 "figures": {"regret": 1.0}, "trained": False}
