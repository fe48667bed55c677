from __future__ import annotations

import pytest

from plugins.lab.lab_backend import LabBackend, LabBackendOptions
from plugins.lab.grounded import Grounded, GroundedOptions
from plugins.lab.learner import Cell, sigmoid
from plugins.lab.programs import program
from spade_core.interfaces import EstimateInput
from spade_core.records import EnvProgram


def test_reward_is_the_exact_reference_gain_of_one_trial_update():
    backend = LabBackend(LabBackendOptions(skills=1, initial_ability=[0.0], agent_lr=0.3,
                                           reference_difficulties=[2.0]))
    backend.actions[5].extend(["solve", "miss"])
    estimator = Grounded(GroundedOptions(scale=100.0), {"generation_backend": backend})
    got = estimator.estimate(EstimateInput(
        env=EnvProgram(source=program(Cell(0, 0.0), 5), family="lab"),
        hinted=[1.0, 1.0], unhinted=[1.0, 0.0]))
    # Advantages: z-scores of (1, 0) = (+1, -1) (pstdev 0.5); p = 0.5 at difficulty 0, so the
    # update is 0.3 * (1 * 0.5 + -1 * -0.5) = 0.3; gain on difficulty 2: sigmoid(0.3 - 2) -
    # sigmoid(-2).
    gain = sigmoid(0.3 - 2.0) - sigmoid(-2.0)
    assert got.figures["gain"] == pytest.approx(gain, rel=1e-6)
    assert got.designer_reward == pytest.approx(100.0 * gain, rel=1e-6)
    assert backend.learner.theta == [0.0]  # the trial update leaves the learner alone
