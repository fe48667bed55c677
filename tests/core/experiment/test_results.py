"""spade_core/experiment/results.py: the results of a finished experiment: the table's paired
differences and intervals computed by hand, the curves, the checks that arms of one seed shared
seeds, designs, items and compute."""

from __future__ import annotations

import math

import pytest


#: Student-t quantile t(0.975, 2 degrees of freedom), from tables.
T_975_2 = 4.302652729911275


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


def test_the_budget_check_fails_when_trained_arms_spent_unequal_samples(tmp_path):
    """The compute is read from what every trainer reports (``agent_samples``: the lab trainer
    reports no ``*_samples_trained``), so an arm that ran out of environments is caught."""
    import json

    from spade_core.experiment.plan import PlannedRun
    from spade_core.experiment.results import build_results
    from spade_core.experiment.spec import ExperimentSpec

    spec = ExperimentSpec(base="lab.yaml", arms={"full": [], "starved": []}, reference_arm="full",
                          seeds=[0], budget={"iterations": 3},
                          heldout={"suites": {"lab-grid": {}}, "every": 1})
    runs = []
    for arm, samples in (("full", [32, 32, 32]), ("starved", [32, 0, 0])):
        directory = tmp_path / arm
        directory.mkdir()
        (directory / "metrics.jsonl").write_text("".join(json.dumps(
            {"iteration": i, "train": {"agent_samples": float(n), "designer_samples": 8.0,
                                       "optimizer_steps": 1.0}}) + "\n"
            for i, n in enumerate(samples)))
        runs.append(PlannedRun(arm, 0, directory, {"trainer": {"plugin": "lab"}}))
    results = build_results(spec, runs, tmp_path, tmp_path / "lab.yaml")
    full = next(r for r in results["runs"] if r["arm"] == "full")
    assert full["compute"]["agent_samples"] == 96.0 and full["compute"]["designer_samples"] == 24.0
    budget = results["checks"]["per_seed"]["0"]["budget"]["agent_samples"]
    assert budget == {"spread": 64.0, "one_batch": 32.0, "agrees": False}
    assert results["checks"]["budget_agrees"] is False


def test_first_designs_differ_as_expected_between_arms_with_different_designers(tmp_path):
    """Arms that differ only in the estimator must propose the same first environments; an arm
    with another designer is expected to propose others, which is not a failed check."""
    import json

    from spade_core.experiment.plan import PlannedRun
    from spade_core.experiment.results import build_results
    from spade_core.experiment.spec import ExperimentSpec

    spec = ExperimentSpec(base="lab.yaml", arms={"regret": [], "blend": [], "random": []},
                          reference_arm="random", seeds=[0], budget={"iterations": 1},
                          heldout={"suites": {"lab-grid": {}}, "every": 1})
    arms = {"regret": ({"estimator": "regret"}, "e1"), "blend": ({"estimator": "blend"}, "e1"),
            "random": ({"backend": {"plugin": "lab", "options": {"designer": "random"}}}, "e9")}
    runs = []
    for arm, (config, design) in arms.items():
        directory = tmp_path / arm
        (directory / "envs").mkdir(parents=True)
        (directory / "metrics.jsonl").write_text(json.dumps({"iteration": 0, "train": {}}) + "\n")
        (directory / "envs" / f"{design}.json").write_text(json.dumps({"id": design,
                                                                       "iteration": 0}))
        runs.append(PlannedRun(arm, 0, directory, {"backend": {"plugin": "lab"}} | config))
    checks = build_results(spec, runs, tmp_path, tmp_path / "lab.yaml")["checks"]
    assert checks["same_first_designs"] and checks["first_designs_differ_as_expected"]
    assert checks["per_seed"]["0"]["first_designs_differ_as_expected"]
    # The same difference between arms expected to agree is a failure.
    (tmp_path / "blend" / "envs" / "e1.json").rename(tmp_path / "blend" / "envs" / "e2.json")
    (tmp_path / "blend" / "envs" / "e2.json").write_text(json.dumps({"id": "e2", "iteration": 0}))
    checks = build_results(spec, runs, tmp_path, tmp_path / "lab.yaml")["checks"]
    assert not checks["same_first_designs"] and not checks["first_designs_differ_as_expected"]


def test_a_finished_runs_record_is_read_once_and_an_unfinished_one_each_time(tmp_path):
    """``build_results(..., finished)`` (an experiment rewriting its results as runs end) reads
    a run that completed its budget once; a run still going is read again."""
    import json

    from spade_core.experiment.plan import PlannedRun
    from spade_core.experiment.results import build_results
    from spade_core.experiment.spec import ExperimentSpec

    spec = ExperimentSpec(base="lab.yaml", arms={"done": [], "going": []}, reference_arm="done",
                          seeds=[0], budget={"iterations": 2},
                          heldout={"suites": {"lab-grid": {}}, "every": 1})
    runs = []
    for arm, iterations, status in (("done", 2, "completed"), ("going", 1, "running")):
        directory = tmp_path / arm
        (directory / "envs").mkdir(parents=True)
        (directory / "metrics.jsonl").write_text("".join(
            json.dumps({"iteration": i, "train": {}}) + "\n" for i in range(iterations)))
        (directory / "summary.json").write_text(json.dumps({"status": status}))
        (directory / "envs" / "e1.json").write_text(json.dumps({"id": "e1", "iteration": 0}))
        runs.append(PlannedRun(arm, 0, directory, {"backend": {"plugin": "lab"}}))
    finished: dict = {}
    first = build_results(spec, runs, tmp_path, tmp_path / "lab.yaml", finished)
    assert list(finished) == [str(tmp_path / "done")]
    for arm in ("done", "going"):  # both runs' files change; only the unfinished one is read
        (tmp_path / arm / "envs" / "e1.json").write_text(json.dumps({"id": "e7", "iteration": 0}))
    again = build_results(spec, runs, tmp_path, tmp_path / "lab.yaml", finished)
    designs = {r["arm"]: r["first_designs"] for r in again["runs"]}
    assert designs == {"done": ["e1"], "going": ["e7"]}
    assert first["runs"][0] == again["runs"][0]
    fresh = build_results(spec, runs, tmp_path, tmp_path / "lab.yaml")  # no cache: read again
    assert {r["arm"]: r["first_designs"] for r in fresh["runs"]} == {"done": ["e7"],
                                                                       "going": ["e7"]}
