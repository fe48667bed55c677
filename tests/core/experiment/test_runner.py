"""``spade experiment`` end to end on the fake self-play loop: a scripted backend whose held-out
success per arm and seed is known, so the table's figures can be computed by hand; a killed
experiment resumed; the shared seeds, first designs, held-out items and compute checked."""

from __future__ import annotations

import copy
import json
import math

import pytest
import yaml

import plugins.designer.plugin as designer_plugin
import plugins.estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.errors import ConfigError
from spade_core.experiment.compute import cumulative
from spade_core.experiment.runner import run_experiment
from spade_core.experiment.spec import load_spec
from spade_core.testing import load_test_plugins

from fakes.experiment import FakeInterruptPlugin, FakeKnownPlugin
from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin

#: Student-t quantile t(0.975, 2 degrees of freedom), from tables.
T_975_2 = 4.302652729911275


def write_experiment(tmp_path, **changes):
    base = copy.deepcopy(FAKE_RUN_CONFIG)
    base["backend"] = {"plugin": "fake-known-backend", "options": {"right": 0}}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    spec = {"name": "t", "base": "base.yaml",
            "arms": {"ref": {"backend.options.right": 1},
                     "good": ["backend.options.right=2", "backend.options.odd_bonus=1"]},
            "reference_arm": "ref", "seeds": [0, 1, 2], "budget": {"iterations": 2},
            "heldout": {"suites": {"known": {}}, "every": 1}}
    spec.update(changes)
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def loaded(*extra):
    plugins = load_test_plugins(FakeSelfPlayPlugin(), designer_plugin, estimators_plugin,
                                trainers_plugin, FakeKnownPlugin(), *extra)
    assert not [p.error for p in plugins.plugins if p.error]
    return plugins


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One experiment killed in its third run's second iteration, then run again."""
    tmp_path = tmp_path_factory.mktemp("experiment")
    path = write_experiment(tmp_path)
    out = tmp_path / "out"
    first: list[tuple[str, int, str]] = []
    with pytest.raises(KeyboardInterrupt):
        run_experiment(path, out, plugins=loaded(FakeInterruptPlugin(at=6)),
                       report=lambda line: None,
                       after_run=lambda run, state: first.append((run.arm, run.seed, state)))
    second: list[tuple[str, int, str]] = []
    run_experiment(path, out, plugins=loaded(), report=lambda line: None,
                   after_run=lambda run, state: second.append((run.arm, run.seed, state)))
    results = json.loads((out / "results.json").read_text())
    return first, second, results, out


def test_resuming_runs_only_what_was_missing(finished):
    first, second, results, out = finished
    # Runs go seed by seed, the reference arm first; the third run died in its 2nd iteration.
    assert first == [("ref", 0, "fresh"), ("good", 0, "fresh")]
    assert second == [("ref", 0, "done"), ("good", 0, "done"), ("ref", 1, "resume"),
                      ("good", 1, "fresh"), ("ref", 2, "fresh"), ("good", 2, "fresh")]
    resumed = json.loads((out / "runs/ref/seed-1/summary.json").read_text())
    assert resumed["resumed_from"] == 1 and resumed["iterations_completed"] == 2
    assert results["complete"] and all(r["status"] == "completed" for r in results["runs"])


def test_table_differences_and_intervals_equal_the_hand_computed(finished):
    _, _, results, _ = finished
    table = results["table"]
    assert table["at_iterations"] == 2 and table["reference_arm"] == "ref"
    overall = table["suites"]["known"]["overall"]
    # ref answers q0 right at every seed: 1/4. good answers q0, q1 (and q2 at odd seeds).
    assert overall["arms"]["ref"]["per_seed"] == {"0": 0.25, "1": 0.25, "2": 0.25}
    assert overall["arms"]["good"]["per_seed"] == {"0": 0.5, "1": 0.75, "2": 0.5}
    diffs = [0.25, 0.5, 0.25]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    half = T_975_2 * sd / math.sqrt(3)
    good = overall["vs_reference"]["good"]
    assert good["per_seed"] == {"0": 0.25, "1": 0.5, "2": 0.25}
    assert good["mean"] == pytest.approx(1 / 3)
    assert good["low"] == pytest.approx(mean - half) and good["high"] == pytest.approx(mean + half)
    assert "ref" not in overall["vs_reference"]
    # The per-answer split: the "no" bucket shows what good gains only at odd seeds.
    no = table["suites"]["known"]["no"]["vs_reference"]["good"]
    assert no["per_seed"] == {"0": 0.0, "1": 0.5, "2": 0.0}


def test_curves_start_at_the_untrained_model(finished):
    _, _, results, _ = finished
    curve = results["curves"]["known"]["overall"]["good"]
    assert [p["iterations"] for p in curve] == [0, 1, 2]
    assert curve[0]["mean"] == 0.0  # the base backend answers nothing right
    assert curve[2]["per_seed"] == {"0": 0.5, "1": 0.75, "2": 0.5}
    assert results["baseline"]["0"]["known"]["overall"] == 0.0


def test_arms_of_one_seed_share_seeds_designs_items_and_compute(finished):
    _, _, results, _ = finished
    checks = results["checks"]
    assert checks["same_seeds"] and checks["same_first_designs"]
    assert checks["same_heldout_items"] and checks["budget_agrees"]
    per_seed = checks["per_seed"]["1"]
    assert per_seed["first_designs"]["ref"] == per_seed["first_designs"]["good"] != []
    for run in results["runs"]:  # the fake backend returns no token ids: words are counted
        assert run["compute"]["iterations"] == 2.0
        assert run["compute"]["tokens_designer"] > 0 and run["compute"]["tokens_agent"] > 0
        assert run["compute"]["tokens_eval"] == 8.0  # one word per reply: 4 items, 2 evals
    designer = {r["compute"]["tokens_designer"] for r in results["runs"] if r["seed"] == 1}
    assert len(designer) == 1


def test_compute_is_cumulated_per_iteration():
    rows = [{"iteration": 0, "train": {"agent_samples_trained": 4.0, "optimizer_steps": 1.0},
             "tokens": {"designer": 100, "agent": 30, "eval": 8}},
            {"iteration": 1, "train": {}, "tokens": {"agent": 20}}]
    first, second = cumulative(rows)
    assert first["tokens_total"] == 130.0 and first["tokens_eval"] == 8.0
    assert second == {**second, "iterations": 2.0, "agent_samples": 4.0, "optimizer_steps": 1.0,
                      "tokens_agent": 50.0, "tokens_total": 150.0}


@pytest.mark.parametrize("change, message", [
    ({"reference_arm": "other"}, "reference_arm 'other' is not one of the arms"),
    ({"arms": {"ref": ["run.seed=3"]}}, "'run.seed' is set by the experiment itself"),
    ({"budget": {"iterations": 2, "steps": 3}}, "budget.steps"),
])
def test_bad_experiment_files_are_refused_with_their_key(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_spec(write_experiment(tmp_path, **change))


def test_a_bad_arm_override_fails_before_anything_runs(tmp_path):
    path = write_experiment(tmp_path, arms={"ref": [], "bad": ["loop.no_such_key=1"]})
    with pytest.raises(ConfigError, match="arm 'bad'"):
        run_experiment(path, tmp_path / "out", plugins=loaded(), report=lambda line: None)
    assert not (tmp_path / "out" / "runs").exists()


@pytest.mark.parametrize("name", ["paper-games", "paper-tool-use", "cpu-spade-vs-fixed",
                                  "learning", "cpu-learning"])
def test_shipped_experiment_files_are_valid(name):
    from pathlib import Path

    spec, base = load_spec(Path("experiments") / f"{name}.yaml")
    assert base.is_file() and spec.reference_arm in spec.arms


def test_the_sample_budget_reaches_a_trainer_named_in_shorthand(tmp_path):
    """``budget.max_samples`` is set as ``trainer.options.max_samples`` on every trained arm, a
    ``trainer: name`` shorthand expanded as ``--set`` expands it; an untrained arm is left alone."""
    from spade_core.experiment.plan import plan

    path = write_experiment(tmp_path, budget={"iterations": 2, "max_samples": 6},
                            arms={"ref": {"trainer": "grpo"}, "good": {"trainer": "none"}})
    spec, base_path = load_spec(path)
    base = yaml.safe_load(base_path.read_text())
    runs = {run.arm: run for run in plan(spec, base, tmp_path / "out") if run.seed == 0}
    assert runs["ref"].config["trainer"] == {"plugin": "grpo", "options": {"max_samples": 6}}
    assert runs["good"].config["trainer"] == "none"


def test_an_arm_that_cannot_run_here_fails_before_anything_runs(tmp_path):
    """Each arm's config gets the preflight ``spade run`` makes (here the trainer's: sampling and
    training temperatures that disagree) before the first run starts, named with its arm."""
    path = write_experiment(tmp_path, arms={"ref": [], "bad": [
        "trainer=grpo", "trainer.options.temperature=0.5", "loop.designer_temperature=0.8"]})
    with pytest.raises(ConfigError, match="arm 'bad'.*disagree"):
        run_experiment(path, tmp_path / "out", plugins=loaded(), report=lambda line: None)
    assert not (tmp_path / "out" / "runs").exists()
