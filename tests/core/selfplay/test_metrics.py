"""Per-iteration metrics (spade_core.selfplay.metrics): the console line and the run's totals."""

from __future__ import annotations


def test_a_run_that_played_nothing_ends_with_a_warning_and_n_a_lines(tmp_path):
    from spade_core.selfplay.metrics import iteration_line as _iteration_line
    from spade_core.selfplay.run_loop import end_message

    done = end_message({"status": "completed", "error": None, "iterations_completed": 1,
                        "seconds": 80.0, "envs_proposed": 8, "envs_valid": 0,
                        "envs_played": 0, "envs_mastered": 0}, tmp_path, 1)
    assert ("spade: warning: no environment was played in 1 iteration (valid 0 of 8 "
            "proposed): regret and success are n/a") in done
    line = _iteration_line({"iteration": 0, "envs_proposed": 8, "envs_valid": 0,
                            "envs_duplicate": 0, "envs_played": 0, "mean_regret": 0.0,
                            "mean_designer_reward": -0.5, "agent_success_unhinted": 0.0,
                            "agent_success_hinted": 0.0, "seconds": {"design": 12.25}})
    assert "regret n/a" in line and "success n/a (nothing played: 0 of 8 proposals valid)" in line
    assert "designer reward -0.500" in line and "0.000" not in line


def test_a_row_counts_fresh_proposals_and_every_play_and_holds_every_total():
    from spade_core.phases import PhaseTimer
    from spade_core.records import Difficulty, Document, Episode, Verdict
    from spade_core.selfplay.metrics import TOTALS, iteration_metrics, iteration_line
    from spade_core.selfplay.proposal import Proposal

    from fakes.selfplay import FakeFamily

    def proposal(replayed, valid, reward):
        p = Proposal(index=0, family=FakeFamily(), document=Document(id="d", text=""), prompt=[],
                     completions=["x"], replayed=replayed,
                     verdict=Verdict(valid, "ok" if valid else "syntax", ""))
        if valid:
            p.accept()
            p.unhinted = [Episode(env_id="", seed=0, hinted=False, first_observation="",
                                  reward=reward)]
            p.difficulty = Difficulty(figures={}, designer_reward=0.5, regret=1.0 - reward)
            p.designer_reward = 0.5
        else:
            p.designer_reward = -0.5
        return p

    row = iteration_metrics(3, [proposal(False, True, 1.0), proposal(False, False, 0.0),
                                proposal(True, True, 0.0)], mastered=1, timer=PhaseTimer())
    assert set(TOTALS) <= set(row)
    assert (row["envs_proposed"], row["envs_valid"], row["envs_played"],
            row["envs_replayed"], row["envs_mastered"]) == (2, 1, 2, 1, 1)
    assert row["mean_regret"] == 0.5 and row["mean_designer_reward"] == 0.0
    assert row["verdicts"] == {"ok": 1, "syntax": 1}
    line = iteration_line(row)
    assert line.startswith("iteration 3: proposed 2, valid 1, duplicate 0, played 2, ")
    assert "regret 0.500" in line and "success 0.50 unhinted / 0.00 hinted" in line
