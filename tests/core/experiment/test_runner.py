"""spade_core/experiment/runner.py: ``spade experiment`` on the fake self-play loop (a scripted
backend whose held-out success per arm and seed is known): a killed experiment resumed, arms that
cannot run refused before anything runs (the table, curves and checks of the same run:
test_results.py)."""

from __future__ import annotations

import json

import pytest

from spade_core.errors import ConfigError
from spade_core.experiment.runner import run_experiment

from fakes.experiment import experiment_plugins as loaded
from fakes.experiment import write_experiment


def test_resuming_runs_only_what_was_missing(finished):
    first, second, results, out = finished
    # Runs go seed by seed, the reference arm first; the third run died in its 2nd iteration.
    assert first == [("ref", 0, "fresh"), ("good", 0, "fresh")]
    assert second == [("ref", 0, "done"), ("good", 0, "done"), ("ref", 1, "resume"),
                      ("good", 1, "fresh"), ("ref", 2, "fresh"), ("good", 2, "fresh")]
    resumed = json.loads((out / "runs/ref/seed-1/summary.json").read_text())
    assert resumed["resumed_from"] == 1 and resumed["iterations_completed"] == 2
    assert results["complete"] and all(r["status"] == "completed" for r in results["runs"])


def test_a_bad_arm_override_fails_before_anything_runs(tmp_path):
    path = write_experiment(tmp_path, arms={"ref": [], "bad": ["loop.no_such_key=1"]})
    with pytest.raises(ConfigError, match="arm 'bad'"):
        run_experiment(path, tmp_path / "out", plugins=loaded(), report=lambda line: None)
    assert not (tmp_path / "out" / "runs").exists()


def test_an_arm_that_cannot_run_here_fails_before_anything_runs(tmp_path):
    """Each arm's config gets the preflight ``spade run`` makes (here the trainer's: sampling and
    training temperatures that disagree) before the first run starts, named with its arm."""
    path = write_experiment(tmp_path, arms={"ref": [], "bad": [
        "trainer=grpo", "trainer.options.temperature=0.5", "loop.designer_temperature=0.8"]})
    with pytest.raises(ConfigError, match="arm 'bad'.*disagree"):
        run_experiment(path, tmp_path / "out", plugins=loaded(), report=lambda line: None)
    assert not (tmp_path / "out" / "runs").exists()


def test_runs_as_ray_tasks_keep_their_results_when_the_experiment_stops(tmp_path, monkeypatch):
    """Ray's path writes results.json when the experiment stops part-way, as the serial path
    does (it was written only once every run had ended)."""
    import spade_core.experiment.ray_runs as ray_runs

    def fake_run_on_ray(spec, runs, iterations, execute, report, after_run=None):
        """Stands in for the cluster: runs the first two runs here, then "the machine stops"."""
        for run in runs[:2]:
            after_run(run, execute(run, iterations, loaded(), report))
        raise KeyboardInterrupt

    monkeypatch.setattr(ray_runs, "run_on_ray", fake_run_on_ray)
    path = write_experiment(tmp_path, ray={"address": "auto"}, heldout={
        "suites": {"known": {}}, "every": 1, "baseline": False})
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(path, out, plugins=loaded(), report=lambda line: None)
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert [r["status"] for r in runs].count("completed") == 2
