"""The status rules: when an environment is mastered, too hard, or still the frontier."""

from __future__ import annotations


def test_too_hard_needs_both_rollout_counts_unsolved() -> None:
    from envmemory.mastery import MasteryRule, update_stats

    rule = MasteryRule(mastery_rollouts=6, too_hard_rollouts=6)
    # Won unhinted 2 of 3 each time, never hinted (a misleading hint): still the frontier.
    stats, status = {}, "frontier"
    for _ in range(2):
        stats, status = update_stats(stats, status, [0.0] * 3, [0.0, 1.0, 1.0], {}, 0.0, rule)
    assert status == "frontier"
    # Never won either way over both counts: too hard.
    stats, status = {}, "frontier"
    for _ in range(2):
        stats, status = update_stats(stats, status, [0.0] * 3, [0.0] * 3, {}, 0.0, rule)
    assert status == "too_hard"
    # A too-hard count longer than the mastery count still fills with unhinted plays.
    rule = MasteryRule(mastery_rollouts=2, too_hard_rollouts=6)
    stats, status = {}, "frontier"
    for _ in range(2):
        stats, status = update_stats(stats, status, [0.0] * 3, [0.0] * 3, {}, 0.0, rule)
    assert status == "too_hard" and len(stats["recent_unhinted_wins"]) == 6
