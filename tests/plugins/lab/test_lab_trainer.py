from __future__ import annotations

import math

import pytest

from plugins.lab.lab_backend import LabBackend, LabBackendOptions
from plugins.lab.learner import Cell, sigmoid
from plugins.lab.programs import program
from plugins.lab.lab_trainer import LabTrainer, LabTrainerOptions
from spade_core.errors import ConfigError
from spade_core.interfaces import TrainingSample


def agent(reply: str, reward: float, group: str = "e1") -> TrainingSample:
    obs = ("Lab task 1: skill 0, difficulty 0.0, kind ordinary. "
           "Compute 100000 + 200000 in \\boxed{}.")
    return TrainingSample(role="agent", reward=reward, group=group, messages=[
        {"role": "system", "content": "s"}, {"role": "user", "content": obs},
        {"role": "assistant", "content": reply}])


def design(cell: Cell, reward: float, **meta) -> TrainingSample:
    return TrainingSample(role="designer", reward=reward, group=str(cell), meta={"skill": "lab",
                          **meta}, messages=[{"role": "user", "content": "design"},
                                             {"role": "assistant", "content": program(cell, 3)}])


def test_one_update_applies_the_loop_advantages_to_the_learner_formula():
    backend = LabBackend(LabBackendOptions(skills=1, initial_ability=[0.0], agent_lr=0.3,
                                           designer_lr=0.5, difficulties=[0.0, 1.0],
                                           kinds=["ordinary"]))
    trainer = LabTrainer(LabTrainerOptions(), backend)
    a, b = backend.learner.cells
    held = [design(a, 1.0), design(b, 0.0)]
    then = trainer.record_logprobs(held)
    assert then == [[math.log(0.5)], [math.log(0.5)]]
    held[1].meta["rollout_logps"] = [math.log(0.25)]  # generated when b had 0.25: weight 2
    metrics = trainer.train([agent("solve: \\boxed{300000}", 1.0),
                             agent("miss: \\boxed{300001}", 0.0)] + held)
    # Agent: group z-scores (+1, -1), p = 0.5: delta = 0.3 * (0.5 + 0.5) = 0.3.
    assert backend.learner.theta == pytest.approx([0.3])
    # Designer: one skill baseline, mean 0.5: advantages (+0.5, -0.5), weights (1, 2):
    # logit a: 0.5 * (0.5 * 0.5 - 1.0 * -0.5) = 0.375 (= -logit b).
    assert backend.learner.logits == pytest.approx([0.375, -0.375])
    assert metrics["agent_samples"] == 2 and metrics["optimizer_steps"] == 1
    assert metrics["tis_mean_weight"] == pytest.approx(1.5)
    assert metrics["heldout_change"] == pytest.approx(
        backend.learner.heldout() - sum(sigmoid(-d) for d in (0, 1, 2, 3, 4)) / 5)
    # What the lab's tables read: both designs moved the policy; its entropy after the update.
    p = 1 / (1 + math.exp(-0.75))
    assert metrics["designer_nonzero_advantages"] == 2
    assert metrics["designer_entropy"] == pytest.approx(-p * math.log(p) - (1 - p) * math.log(1 - p))
    # A group of refused duplicates (one reward for all): no advantage, nothing moves.
    stuck = trainer.train([design(a, -0.5), design(a, -0.5)])
    assert stuck["designer_nonzero_advantages"] == 0
    assert stuck["designer_entropy"] == pytest.approx(metrics["designer_entropy"])


def test_the_designer_can_be_frozen_and_the_backend_must_be_the_lab():
    backend = LabBackend(LabBackendOptions())
    trainer = LabTrainer(LabTrainerOptions(train_designer=False), backend)
    frozen = trainer.train([design(backend.learner.cells[0], 1.0),
                            design(backend.learner.cells[1], 0.0)])
    assert set(backend.learner.logits) == {0.0} and "designer_entropy" not in frozen
    with pytest.raises(ConfigError, match="backend 'lab'"):
        LabTrainer(LabTrainerOptions(), object())


def test_save_and_load(tmp_path):
    backend = LabBackend(LabBackendOptions())
    trainer = LabTrainer(LabTrainerOptions(), backend)
    backend.learner.theta[1] = 2.5
    trainer.save(tmp_path)
    fresh = LabBackend(LabBackendOptions())
    LabTrainer(LabTrainerOptions(), fresh).load(tmp_path)
    assert fresh.learner.theta[1] == 2.5
