"""spade_core/cli/experiment_cmd.py: ``spade experiment --check`` prints the planned runs and runs
nothing; without it the runs are made and results.json written (the fake self-play loop)."""

from __future__ import annotations

import json

from spade_core.cli import main

from fakes.experiment import experiment_plugins, write_experiment


def test_check_prints_every_arm_and_seed_and_runs_nothing(tmp_path, capsys):
    path = write_experiment(tmp_path, seeds=[0, 1])
    out = tmp_path / "out"
    assert main(["experiment", str(path), "--out", str(out), "--check"],
                plugins=experiment_plugins()) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["experiment"] == "t" and printed["folder"] == str(out)
    assert [(r["arm"], r["seed"]) for r in printed["runs"]] == [
        ("ref", 0), ("good", 0), ("ref", 1), ("good", 1)]
    assert "backend.options.right=2" in printed["runs"][1]["overrides"]
    assert not (out / "runs").exists() and not (out / "results.json").exists()


def test_without_check_the_runs_are_made_and_the_results_written(tmp_path):
    path = write_experiment(tmp_path, seeds=[0], budget={"iterations": 1})
    out = tmp_path / "out"
    assert main(["experiment", str(path), "--out", str(out)], plugins=experiment_plugins()) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["complete"] and {r["arm"] for r in results["runs"]} == {"ref", "good"}
