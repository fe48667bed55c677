"""Metric loggers behind optional extras: TensorBoard for real, trackio and wandb skipped cleanly
when their packages are not installed."""

from __future__ import annotations

import importlib.util
import os

import pytest

from spade_core.config.load import resolve_config
from spade_core.errors import ConfigError
from spade_core.selfplay.run_loop import run

from fakes.training import load_training_plugins, training_config


def _run(run_dir, iterations, logging, resume=False):
    import plugins.loggers.plugin as loggers_plugin

    loaded = load_training_plugins()
    loaded.manager.register(loggers_plugin)
    data = training_config(run_dir, iterations, logging=logging)
    resolved = resolve_config(data, loaded.registry, "t.yaml")
    return run(resolved, loaded, report=lambda m: None, resume=run_dir if resume else None)


def test_flatten_keeps_numbers_under_slash_names():
    from plugins.loggers.plugin import flatten

    assert flatten({"a": 1, "b": {"c": 2.5, "d": "text"}, "e": True}) == \
        {"a": 1.0, "b/c": 2.5, "e": 1.0}


def test_tensorboard_gets_every_iteration_once_across_a_resume(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = _run(tmp_path / "run", 2, {"backends": ["tensorboard"]})
    _run(run_dir, 3, {"backends": ["tensorboard"]}, resume=True)
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    assert "train/loss" in events.Tags()["scalars"]
    steps = [e.step for e in events.Scalars("train/loss")]
    assert steps == [0, 1, 2]
    assert [e.value for e in events.Scalars("train/updates")] == [1.0, 2.0, 3.0]
    assert "seconds/rollout" in events.Tags()["scalars"]


@pytest.mark.parametrize("backend", ["trackio", "wandb"])
def test_missing_tracker_stops_the_run_with_the_extra_to_install(tmp_path, backend):
    if importlib.util.find_spec(backend) is not None:
        pytest.skip(f"{backend} is installed")
    with pytest.raises(ConfigError, match=rf"spade-rl\[{backend}\]"):
        _run(tmp_path / "run", 1, {"backends": [backend]})


def test_wandb_offline_logs_when_installed(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    run_dir = _run(tmp_path / "run", 1, {"backends": ["wandb"],
                                         "options": {"wandb": {"mode": "offline"}}})
    assert any((run_dir / "wandb").rglob("*.wandb"))


def test_trackio_logs_when_installed(tmp_path, monkeypatch):
    pytest.importorskip("trackio")
    monkeypatch.setenv("TRACKIO_DIR", str(tmp_path / "trackio"))
    _run(tmp_path / "run", 1, {"backends": ["trackio"], "project": "spade-test"})
    assert os.listdir(tmp_path / "trackio")
