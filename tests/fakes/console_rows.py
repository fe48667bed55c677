"""A row of ``metrics.jsonl`` as the console plugin's table and progress read it."""

from __future__ import annotations


def metrics(iteration: int, regret: float) -> dict:
    return {"iteration": iteration, "envs_proposed": 4, "envs_valid": 3, "envs_duplicate": 1,
            "envs_played": 2, "envs_mastered": 1, "envs_too_hard": 0, "mean_regret": regret,
            "mean_designer_reward": 0.25, "agent_success_unhinted": 0.5,
            "agent_success_hinted": 0.75, "verdicts": {"ok": 3, "timeout": 1},
            "seconds": {"design": 3.5, "rollout": 9.25, "hint": 1.0}, "train": {"loss": 0.1}}
