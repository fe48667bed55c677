"""The simulated learner's formulas, on samples worked out by hand."""

from __future__ import annotations

import math

import pytest

from plugins.lab.learner import MISS, SOLVE, Cell, Learner, LearnerParams, sigmoid


def learner(**params) -> Learner:
    base = dict(skills=2, difficulties=(0.0, 2.0), kinds=("ordinary",), initial_ability=(0.0,),
                agent_lr=0.3, designer_lr=0.5)
    return Learner(LearnerParams(**(base | params)))


def test_success_is_the_rasch_probability_with_the_hint_boost():
    lab = learner(hint_boost=2.0)
    assert lab.success(Cell(0, 0.0)) == 0.5
    assert lab.success(Cell(0, 2.0)) == pytest.approx(1 / (1 + math.e ** 2))
    assert lab.success(Cell(0, 2.0), hinted=True) == 0.5
    assert lab.success(Cell(0, 9.0, "leaky")) == 0.0
    assert lab.success(Cell(0, 9.0, "leaky"), hinted=True) == 1.0


def test_agent_update_equals_the_policy_gradient_worked_by_hand():
    lab = learner()
    # Skill 0 at difficulty 0: p = 0.5. A solve with advantage +1 has gradient 1 - p = 0.5;
    # a miss with advantage -1 has gradient -p = -0.5. Delta = 0.3 * (0.5 + 0.5) = 0.3.
    # Skill 1 at difficulty 2: p = sigmoid(-2) = 0.11920; a miss with advantage +0.5 gives
    # 0.3 * 0.5 * -0.119203 = -0.0178804.
    delta = lab.agent_update([(Cell(0, 0.0), SOLVE, False, 1.0), (Cell(0, 0.0), MISS, False, -1.0),
                              (Cell(1, 2.0), MISS, False, 0.5)])
    assert delta == pytest.approx([0.3, -0.0178804], abs=1e-7)
    assert lab.theta == pytest.approx([0.3, -0.0178804], abs=1e-7)


def test_actions_the_ability_does_not_choose_have_no_gradient():
    lab = learner()
    assert lab.agent_update([(Cell(0, 0.0, "leaky"), "blind", False, 1.0),
                             (Cell(0, 0.0, "leaky"), "copy", True, 1.0)]) == [0.0, 0.0]


def test_transfer_and_forgetting():
    lab = learner(transfer=0.5, forgetting=0.1)
    lab.apply_agent_delta([1.0, 0.0])
    # skill 0: 1.0 then 10 % back to 0 -> 0.9; skill 1: 0.5 * 1.0 -> 0.45.
    assert lab.theta == pytest.approx([0.9, 0.45])


def test_designer_update_equals_the_softmax_policy_gradient_by_hand():
    lab = learner(skills=1)  # two cells, uniform: pi = (0.5, 0.5)
    a, b = lab.cells
    lab.designer_update([(a, 1.0, 1.0), (b, -0.5, 0.8)])
    # cell a: 0.5 * (1 * (1 - 0.5) + (-0.5 * 0.8) * (0 - 0.5)) = 0.5 * (0.5 + 0.2) = 0.35
    # cell b: 0.5 * (1 * (0 - 0.5) + (-0.4) * (1 - 0.5)) = 0.5 * (-0.5 - 0.2) = -0.35
    assert lab.logits == pytest.approx([0.35, -0.35])
    assert lab.policy()[0] == pytest.approx(sigmoid(0.7))


def test_heldout_is_the_exact_mean_success_on_the_grid():
    lab = learner(heldout_difficulties=(0.0, 2.0))
    lab.theta = [0.0, 2.0]
    expected = (0.5 + sigmoid(-2.0) + sigmoid(2.0) + 0.5) / 4
    assert lab.heldout() == pytest.approx(expected)
    assert lab.heldout([2.0]) == pytest.approx((sigmoid(-2.0) + 0.5) / 2)


def test_ability_bands_share_band_transfer_of_their_change():
    lab = learner(skills=1, band_edges=(1.0,), band_transfer=0.25, difficulties=(0.0, 2.0))
    assert lab.theta == [0.0, 0.0]  # skill 0: the band below 1, the band from 1 up
    lab.agent_update([(Cell(0, 0.0), SOLVE, False, 1.0)])  # 0.3 * 1 * (1 - 0.5) = 0.15
    assert lab.theta == pytest.approx([0.15, 0.0375])
    assert lab.success(Cell(0, 2.0)) == pytest.approx(sigmoid(0.0375 - 2.0))
    lab.params.heldout_difficulties = (2.0,)
    assert lab.heldout() == pytest.approx(sigmoid(0.0375 - 2.0))


def test_kind_weights_set_the_prior_and_drop_the_kinds_of_weight_zero():
    lab = learner(skills=1, kinds=("ordinary", "leaky", "noisy"), kind_weights=(0.8, 0.1, 0.1))
    shares = {k: sum(q for c, q in zip(lab.cells, lab.prior) if c.kind == k) for k in
              ("ordinary", "leaky", "noisy")}
    assert shares == pytest.approx({"ordinary": 0.8, "leaky": 0.1, "noisy": 0.1})
    assert lab.policy() == pytest.approx(lab.prior)  # the learned policy starts at the prior
    none = learner(skills=1, kinds=("ordinary", "leaky", "noisy"), kind_weights=(1.0, 0.0, 0.0))
    assert {c.kind for c in none.cells} == {"ordinary"}
