"""Status rules: when an environment counts as mastered, too hard, or still at the frontier.

An environment is ``mastered`` once the agent's unhinted success rate over its last
``mastery_rollouts`` unhinted rollouts reaches ``mastery_threshold``; ``mastered`` is final (the
environment is never issued again). It is ``too_hard`` while the success rates over its last
``too_hard_rollouts`` hinted rollouts *and* its last ``too_hard_rollouts`` unhinted ones both stay
at or below ``too_hard_threshold`` (never solved, with or without the hint: a hint that misleads a
small agent must not retire an environment the agent solves on its own); otherwise it is on the
``frontier``. A rollout succeeds when its episode reward is at least ``success_reward`` (the run's
``loop.success_threshold``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spade_core.records import EnvStatus

#: Statuses that play statistics can move; ``rejected`` and ``duplicate`` records are never played
#: and ``mastered`` is final.
PLAYABLE = (EnvStatus.FRONTIER, EnvStatus.TOO_HARD)


@dataclass(frozen=True)
class MasteryRule:
    """Thresholds and rollout counts of the status rules."""

    success_reward: float = 1.0
    mastery_threshold: float = 0.9
    mastery_rollouts: int = 16
    too_hard_threshold: float = 0.05
    too_hard_rollouts: int = 16

    def __post_init__(self) -> None:
        if self.mastery_rollouts < 1 or self.too_hard_rollouts < 1:
            raise ValueError("mastery_rollouts and too_hard_rollouts must be at least 1")
        if not 0.0 < self.mastery_threshold <= 1.0:
            raise ValueError(f"mastery_threshold must be in (0, 1], got {self.mastery_threshold}")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def update_stats(stats: dict[str, Any], status: str, hinted: Sequence[float],
                 unhinted: Sequence[float], figures: dict[str, float], designer_reward: float,
                 rule: MasteryRule) -> tuple[dict[str, Any], str]:
    """Fold one iteration's rollouts into ``stats`` (a new dict) and return it with the status."""
    new = dict(stats)
    wins_u = [1 if r >= rule.success_reward else 0 for r in unhinted]
    wins_h = [1 if r >= rule.success_reward else 0 for r in hinted]
    # The recent unhinted wins serve both rules, so they keep the longer of their counts.
    kept_u = (list(new.get("recent_unhinted_wins", [])) + wins_u)[
        -max(rule.mastery_rollouts, rule.too_hard_rollouts):]
    recent_u = kept_u[-rule.mastery_rollouts:]
    hard_u = kept_u[-rule.too_hard_rollouts:]
    recent_h = (list(new.get("recent_hinted_wins", [])) + wins_h)[-rule.too_hard_rollouts:]
    new.update({
        "iterations": int(new.get("iterations", 0)) + 1,
        "rollouts_unhinted": int(new.get("rollouts_unhinted", 0)) + len(unhinted),
        "rollouts_hinted": int(new.get("rollouts_hinted", 0)) + len(hinted),
        "wins_unhinted": int(new.get("wins_unhinted", 0)) + sum(wins_u),
        "wins_hinted": int(new.get("wins_hinted", 0)) + sum(wins_h),
        "recent_unhinted_wins": kept_u,
        "recent_hinted_wins": recent_h,
        "unhinted_success": _mean(recent_u),
        "hinted_success": _mean(recent_h),
        "unhinted_mean": _mean(unhinted),
        "hinted_mean": _mean(hinted),
        "regret": float(figures.get("regret", _mean(hinted) - _mean(unhinted))),
        "win_rate": float(figures.get("win_rate", _mean(wins_u))),
        "designer_reward": float(designer_reward),
        "figures": {k: float(v) for k, v in figures.items()},
    })
    if status not in PLAYABLE:
        return new, status
    if len(recent_u) >= rule.mastery_rollouts and _mean(recent_u) >= rule.mastery_threshold:
        return new, EnvStatus.MASTERED
    if (len(recent_h) >= rule.too_hard_rollouts and len(hard_u) >= rule.too_hard_rollouts
            and max(_mean(recent_h), _mean(hard_u)) <= rule.too_hard_threshold):
        return new, EnvStatus.TOO_HARD
    return new, EnvStatus.FRONTIER
