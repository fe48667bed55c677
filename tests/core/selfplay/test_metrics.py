"""Per-iteration metrics (spade_core.selfplay.metrics): the console line and the run's totals."""

from __future__ import annotations


def test_a_run_that_played_nothing_ends_with_a_warning_and_n_a_lines(tmp_path):
    from spade_core.selfplay.metrics import iteration_line as _iteration_line
    from spade_core.selfplay.runner import end_message

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
