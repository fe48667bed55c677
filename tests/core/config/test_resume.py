"""Resuming a run (spade_core.config.resume): which config differences a resume allows, and the
command's usage errors and refusal of a changed config."""

from __future__ import annotations


from fakes.cli import ROOT


def test_config_differences_allow_only_iterations_dir_and_logging():
    from spade_core.config.resume import config_differences

    stored = {"run": {"dir": "a", "iterations": 2, "seed": 0}, "trainer": {"plugin": "grpo"},
              "logging": {"backends": []}}
    current = {"run": {"dir": "b", "iterations": 5, "seed": 0}, "trainer": {"plugin": "grpo"},
               "logging": {"backends": ["tensorboard"]}}
    assert config_differences(stored, current) == []
    current["run"]["seed"] = 1
    current["trainer"] = {"plugin": "none"}
    assert config_differences(stored, current) == ["run.seed", "trainer.plugin"]


def test_cli_resume_errors_are_usage_errors(spade, tmp_path):
    result = spade("run")
    assert result.returncode == 2 and "--resume RUN_DIR" in result.stderr
    result = spade("run", "--resume", str(tmp_path))
    assert result.returncode == 2 and "config.resolved.yaml" in result.stderr


def test_cli_resume_refuses_a_changed_config(spade, tmp_path):
    import yaml

    from spade_core.config.load import load_config
    from spade_core.plugins import load_plugins

    config = ROOT / "configs" / "quickstart.yaml"
    resolved = load_config(config, load_plugins().registry)
    (tmp_path / "config.resolved.yaml").write_text(yaml.safe_dump(resolved.to_dict()))
    result = spade("run", str(config), "--resume", str(tmp_path), "--set", "run.seed=5")
    assert result.returncode == 2 and "run.seed" in result.stderr
