"""The reference's formulas, held to numbers derived by hand from docs/reference.md.

A recorded window (three environments, two skills, four iterations, known rewards and
log-probabilities) goes through the real estimators, advantage code and TIS weights; every
expected number below is written out from the spec's formulas, not computed by the code under
test.
"""

from __future__ import annotations

import math

import pytest

from spade_core.config.schema import LoopSection
from spade_core.interfaces import EnvIteration, EstimateInput
from spade_core.records import EnvProgram
from spade_core.selfplay.samples import env_reward_scale

from plugins.estimators import Blend, BlendOptions, LearningProgress, LearningProgressOptions, \
    LearningProgressPerStep, LearningProgressPerStepOptions, Regret, RegretOptions
from plugins.trainers.samples import EncodedSample, compute_advantages, tis_weights

ENV = EnvProgram(source="class XEnv: pass", family="fake")

#: env -> per iteration of the window: (hinted rewards, unhinted rewards); hinted plays happen at
#: the window's start only.
WINDOW = {
    "a1": [([1, 1, 0, 1], [0, 0, 1, 0]), ([], [0, 1, 1, 0]), ([], [1, 1, 0, 1]),
           ([], [1, 1, 1, 0])],
    "a2": [([0, 0, 0, 0], [0, 0, 0, 0]), ([], [0, 0, 0, 1]), ([], [0, 0, 1, 1]),
           ([], [1, 1, 1, 0])],
    "b1": [([1, 1, 1, 1], [1, 1, 1, 1]), ([], [1, 1, 1, 1]), ([], [1, 1, 1, 1]),
           ([], [1, 1, 1, 1])],
}
SKILL = {"a1": "A", "a2": "A", "b1": "B"}


def _window_input(env: str) -> EstimateInput:
    plays = [EnvIteration(iteration=10 + i, hinted=list(h), unhinted=list(u))
             for i, (h, u) in enumerate(WINDOW[env])]
    return EstimateInput(env=ENV, hinted=plays[0].hinted, unhinted=plays[0].unhinted,
                         iteration=13, window=plays)


def test_blend_over_a_window():
    blend = Blend(BlendOptions())
    # a1: regret 0.75 - 0.25 = 0.5 -> clip(0.5 / 0.15) = 1; win rate = mean raw reward of all 16
    # unhinted plays = 9/16 = 0.5625, inside [0.4, 0.6] -> plateau 1; 0.4 * 1 + 0.6 * 1 = 1.0.
    assert blend.estimate(_window_input("a1")).designer_reward == pytest.approx(1.0)
    # a2: regret 0 -> 0; win rate 6/16 = 0.375 -> plateau 1 - (0.4 - 0.375) / 0.25 = 0.9;
    # 0.6 * 0.9 = 0.54.
    assert blend.estimate(_window_input("a2")).designer_reward == pytest.approx(0.54)
    # b1: regret 0; win rate 1.0 -> 1 - (1.0 - 0.6) / 0.25 < 0 -> plateau 0; reward 0.
    assert blend.estimate(_window_input("b1")).designer_reward == pytest.approx(0.0)
    # Without the window (an immediate estimate) a1's win rate is the first iteration's 0.25:
    # plateau 1 - 0.15 / 0.25 = 0.4 -> 0.4 + 0.6 * 0.4 = 0.64.
    first = _window_input("a1")
    immediate = EstimateInput(env=ENV, hinted=first.hinted, unhinted=first.unhinted)
    assert blend.estimate(immediate).designer_reward == pytest.approx(0.64)


def test_regret_and_micro_progress_over_a_window():
    # The reference's delayed regret: max(0, r_hint - mean of every unhinted play of the window)
    # = 0.75 - 9/16 = 0.1875.
    regret = Regret(RegretOptions()).estimate(_window_input("a1"))
    assert regret.designer_reward == pytest.approx(0.1875)
    # Micro learning progress: slope of the per-iteration means 0.25, 0.5, 0.75, 0.75 (equal
    # weights sqrt(4)) over x = 0..3 is 0.175 per iteration; times (4 - 1) = 0.525.
    blend = Blend(BlendOptions(micro_lp_weight=1.0, regret_weight=0.0, plateau_weight=0.0))
    assert blend.estimate(_window_input("a1")).figures["micro_lp"] == \
        pytest.approx(0.525)
    per_step = LearningProgressPerStep(LearningProgressPerStepOptions(window=8))
    assert per_step.estimate(_window_input("a1")).designer_reward == \
        pytest.approx(0.525)


def test_regret_timeout_penalty_and_solver_variance():
    first = _window_input("a1")
    timed_out = EstimateInput(env=ENV, hinted=first.hinted, unhinted=first.unhinted,
                              window=first.window, step_timeouts=1)
    # The reference's regret variant: -0.5 when the environment's step timed out.
    assert Regret(RegretOptions()).estimate(timed_out).designer_reward == -0.5
    assert Regret(RegretOptions(timeout_penalty=None)).estimate(
        timed_out).designer_reward == pytest.approx(0.1875)
    # Solver variance of the first iteration's [0, 0, 1, 0]: mean 0.25, population variance
    # 0.1875; exp(-(0.1875 - 0.25)^2 / 0.02) = exp(-0.1953125) = 0.8225775. With no earlier play
    # learning potential is its cold start: max(regret, 0) = 0.5, so 0.5 + 0.8225775.
    immediate = EstimateInput(env=ENV, hinted=first.hinted, unhinted=first.unhinted)
    progress = LearningProgress(LearningProgressOptions(solver_variance=True))
    assert progress.estimate(immediate).designer_reward == \
        pytest.approx(1.3225775, abs=1e-6)


def _row(role: str, reward: float, group: str, skill: str = "", scale: float = 1.0
         ) -> EncodedSample:
    return EncodedSample(role=role, group=group, reward=reward, prompt_ids=[1],
                         completion_ids=[2], env_mask=[1], skill=skill, advantage_scale=scale)


def test_designer_advantages_centred_per_skill_and_scaled():
    # env_reward_scale: 12 agent samples per iteration (3 envs x 4 plays) / 3 designs x an
    # interval of 4 = 16 (under the cap of 50); 12 / 1 x 8 = 96 is capped at 50.
    loop = LoopSection()
    assert env_reward_scale(loop, 12, 3, 4) == 16.0
    assert env_reward_scale(loop, 12, 1, 8) == 50.0
    assert env_reward_scale(loop, 0, 3, 4) == 1.0
    rows = [_row("designer", 1.0, "a1", "A", 16.0), _row("designer", 0.54, "a2", "A", 16.0),
            _row("designer", 0.0, "b1", "B", 16.0)]
    compute_advantages(rows, {"designer": "skill"}, {"designer": "none"})
    # Skill A: mean 0.77 -> +0.23 and -0.23, times 16 = +3.68 / -3.68; skill B has one design:
    # 0 (no gradient), as the reference.
    assert [r.advantage for r in rows] == pytest.approx([3.68, -3.68, 0.0])


def test_agent_advantages_are_per_group_z_scores():
    rows = [_row("agent", r, "a1") for r in (0, 0, 1, 0)] + \
           [_row("agent", 1.0, "b1") for _ in range(4)]
    compute_advantages(rows, {"agent": "group"}, {"agent": "group"})
    # a1: mean 0.25, population std sqrt(0.25 * 0.75) = 0.4330127; (0 - 0.25) / 0.4330127 =
    # -0.5773503, (1 - 0.25) / 0.4330127 = 1.7320508. b1: all equal -> 0.
    expected = [-0.5773503, -0.5773503, 1.7320508, -0.5773503, 0.0, 0.0, 0.0, 0.0]
    assert [r.advantage for r in rows] == pytest.approx(expected, abs=1e-6)


def test_tis_weights_are_clamped_ratios():
    train = [-1.0, -2.0, -0.5, -0.2, -3.0]
    rollout = [-1.5, -1.0, -0.5, -1.2, 0.0]
    # exp(0.5) = 1.6487213, exp(-1) = 0.3678794, exp(0) = 1, exp(1) = 2.718 -> 2 (clamp),
    # exp(-3) = 0.0497871.
    assert tis_weights(train, rollout) == pytest.approx(
        [1.6487213, 0.3678794, 1.0, 2.0, 0.0497871], abs=1e-6)
    assert tis_weights([0.0], [-100.0]) == [2.0]  # no overflow
    assert math.isclose(tis_weights([0.0], [0.0], 0.0, 2.0)[0], 1.0)
    with pytest.raises(ValueError, match="2 training log-probs for 1 rollout"):
        tis_weights([0.0, 0.0], [0.0])
