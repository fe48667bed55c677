"""The field's curriculum signals, on inputs worked out by hand against each paper's formula."""

from __future__ import annotations

import math

import pytest

from plugins.estimators import AlphaCurriculum, AlphaCurriculumOptions, Learnability, _Options
from spade_core.interfaces import EstimateInput
from spade_core.records import EnvProgram

ENV = EnvProgram(source="class E: pass", family="f")


def reward(estimator, unhinted, hinted=(1.0, 1.0)):
    return estimator.estimate(EstimateInput(env=ENV, hinted=hinted, unhinted=unhinted)
                              ).designer_reward


def test_alpha_curriculum_is_exp_of_minus_beta_times_the_squared_gap_to_alpha():
    # GenEnv (arXiv 2512.19682): R = exp(-beta * (p - alpha)^2).
    est = AlphaCurriculum(AlphaCurriculumOptions(alpha=0.5, beta=2.0))
    assert reward(est, [1.0, 0.0, 1.0, 0.0]) == 1.0                    # p = 0.5
    assert reward(est, [1.0, 0.0, 0.0, 0.0]) == pytest.approx(math.exp(-2.0 * 0.0625))  # 0.25
    assert reward(est, [0.0, 0.0]) == pytest.approx(math.exp(-0.5))      # p = 0
    sharp = AlphaCurriculum(AlphaCurriculumOptions(alpha=0.25, beta=10.0))
    assert reward(sharp, [1.0, 1.0, 1.0, 1.0]) == pytest.approx(math.exp(-10.0 * 0.5625))


def test_learnability_is_azr_one_minus_mean_success_strictly_inside_0_1():
    # Absolute Zero: r = 1 - p when 0 < p < 1, else 0.
    est = Learnability(_Options())
    assert reward(est, [1.0, 0.0, 0.0, 0.0]) == 0.75
    assert reward(est, [1.0, 1.0, 1.0, 0.0]) == 0.25
    assert reward(est, [1.0, 1.0]) == 0.0
    assert reward(est, [0.0, 0.0]) == 0.0
