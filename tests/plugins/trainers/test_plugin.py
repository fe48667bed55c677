"""The trainers plugin: ``none`` and ``grpo`` registered (grpo with its options model and its
preflight), the ``none`` trainer counting samples without touching a model, and a light import
(torch and TRL only when ``grpo`` is built)."""

from __future__ import annotations


import plugins.trainers.plugin as trainers_plugin
from plugins.trainers.options import GRPOOptions
from plugins.trainers.grpo_preflight import preflight_grpo
from spade_core.interfaces import TrainingSample
from spade_core.testing import load_test_plugins

from fakes.commands import loaded_by


def test_both_trainers_are_registered_grpo_with_its_options_and_preflight():
    loaded = load_test_plugins(trainers_plugin)
    components = loaded.registry.components
    assert components[("trainer", "none")].options is None
    grpo = components[("trainer", "grpo")]
    assert grpo.options is GRPOOptions and grpo.preflight is preflight_grpo


def test_the_none_trainer_counts_samples_per_role_and_saves_an_empty_folder(tmp_path):
    trainer = load_test_plugins(trainers_plugin).registry.build("trainer", "none", {}, "trainer")
    samples = [TrainingSample("agent", [], 1.0), TrainingSample("agent", [], 0.0),
               TrainingSample("designer", [], 0.5)]
    assert trainer.train(samples) == {"designer_samples": 1.0, "designer_mean_reward": 0.5,
                                      "agent_samples": 2.0, "agent_mean_reward": 0.5,
                                      "designer_samples_trained": 0.0,
                                      "agent_samples_trained": 0.0, "optimizer_steps": 0.0}
    assert trainer.train([])["agent_mean_reward"] == 0.0
    trainer.save(tmp_path / "ckpt")
    assert (tmp_path / "ckpt").is_dir() and not list((tmp_path / "ckpt").iterdir())
    assert trainer.load(tmp_path / "ckpt") is None


def test_importing_the_plugin_stays_light():
    assert loaded_by("plugins.trainers.plugin", ("torch", "transformers", "trl", "peft")) == []
