"""The ``grpo`` trainer's preflight: the ``grpo_config`` passthrough checked against TRL's
``GRPOConfig``, and the installed TRL checked for every member the trainer uses."""

from __future__ import annotations

import pytest


def test_grpo_config_passthrough_is_checked_against_trl():
    from plugins.trainers.grpo_preflight import grpo_config_problems

    assert grpo_config_problems({"delta": 4.0, "importance_sampling_level": "sequence"}) == []
    problems = grpo_config_problems({"detla": 4.0, "epsilon": 0.1, "output_dir": "x"})
    assert problems == [
        "trainer.options.grpo_config.epsilon: not settable here; set trainer.options.epsilon "
        "instead",
        "trainer.options.grpo_config.output_dir: not settable here; the trainer sets it itself",
        "trainer.options.grpo_config.detla: trl.GRPOConfig has no field 'detla'; did you mean "
        "'delta'?"]


def test_the_installed_trl_has_what_the_trainer_uses_and_a_missing_member_is_named(monkeypatch):
    from plugins.trainers import grpo_preflight as preflight
    from plugins.trainers.options import GRPOOptions
    from spade_core.errors import ConfigError

    assert preflight.trl_problems() == []
    monkeypatch.setattr(preflight, "TRL_TRAINER_MEMBERS",
                        (*preflight.TRL_TRAINER_MEMBERS, "_no_such_method"))
    (problem,) = preflight.trl_problems()
    assert "lacks GRPOTrainer._no_such_method" in problem and "Tested versions" in problem
    with pytest.raises(ConfigError, match="_no_such_method"):
        preflight.require_trl(GRPOOptions())
