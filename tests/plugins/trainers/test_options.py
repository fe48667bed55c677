"""Options of the ``grpo`` trainer: TRL's names and only those, defaults, and bad values refused
with the option named."""

from __future__ import annotations

import pytest


def test_trl_names_are_the_options_and_old_names_are_refused():
    from pydantic import ValidationError

    from plugins.trainers.options import GRPOOptions

    options = GRPOOptions(epsilon=0.1, epsilon_high=0.3, beta=0.01, per_device_train_batch_size=2,
                          num_iterations=2)
    assert options.model_dump()["epsilon"] == 0.1
    for old in ("clip_low", "clip_high", "kl_coef", "micro_batch_size", "epochs"):
        with pytest.raises(ValidationError, match=old):
            GRPOOptions.model_validate({old: 1})


def test_defaults_and_a_bad_value_is_refused_with_the_option_named():
    from pydantic import ValidationError

    from plugins.trainers.options import GRPOOptions, LoraOptions

    options = GRPOOptions()
    assert (options.learning_rate, options.epsilon, options.epsilon_high, options.beta) == \
        (1e-6, 0.2, 0.28, 0.0)
    assert options.loss_type == "dapo" and options.agent_baseline == "group"
    assert LoraOptions().r == 8 and LoraOptions().target_modules == "all-linear"
    with pytest.raises(ValidationError, match="epsilon"):
        GRPOOptions(epsilon=1.5)
    with pytest.raises(ValidationError, match="loss_type"):
        GRPOOptions.model_validate({"loss_type": "ppo"})
    with pytest.raises(ValidationError, match="r\n"):
        LoraOptions(r=0)
