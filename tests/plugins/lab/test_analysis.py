from __future__ import annotations

import json

import pytest

from plugins.lab.analysis import analyse, flat_from, last_window_kinds, markdown
from plugins.lab.learner import Cell
from plugins.lab.programs import program


def make_run(folder, arm, seed, final, kinds, interval=2, train=None):
    run_dir = folder / "runs" / arm / f"seed-{seed}"
    (run_dir / "envs").mkdir(parents=True)
    (run_dir / "config.resolved.yaml").write_text(
        f"loop:\n  schedule: window\n  regeneration_interval: {interval}\n")
    rows = [{"iteration": i, "envs_duplicate": i % 2, "train": (train or {}).get(i, {}),
             "eval": {"lab-grid": {"pass@1": final * (i + 1) / 4}}} for i in (1, 3)]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for k, kind in enumerate(kinds):
        (run_dir / "envs" / f"e{k}.json").write_text(json.dumps(
            {"iteration": 2 + k % 2, "designer_completion": program(Cell(0, 1.0, kind), k)}))
    (run_dir / "envs" / "old.json").write_text(json.dumps(
        {"iteration": 0, "designer_completion": program(Cell(0, 1.0, "noisy"), 99)}))
    return {"arm": arm, "seed": seed, "dir": str(run_dir)}


def test_iqm_improvement_and_kind_shares(tmp_path):
    runs = [make_run(tmp_path, "random", s, 0.4 + 0.01 * s, ["ordinary", "leaky", "noisy"])
            for s in range(4)]
    runs += [make_run(tmp_path, "good", s, 0.7 + 0.01 * s, ["ordinary", "ordinary"])
             for s in range(4)]
    (tmp_path / "experiment.json").write_text(json.dumps(
        {"spec": {"budget": {"iterations": 4}}, "runs": runs}))
    result = analyse(tmp_path, reps=200)
    good, rand = result["arms"]["good"], result["arms"]["random"]
    assert good["seeds"] == 4 and good["iqm"] == pytest.approx(0.715)
    assert good["iqm_ci95"][0] <= good["iqm"] <= good["iqm_ci95"][1]
    assert good["p_improve_over_random"]["p"] == 1.0
    assert good["kind_share"] == {"ordinary": 1.0, "leaky": 0.0, "noisy": 0.0}
    assert rand["kind_share"]["leaky"] == pytest.approx(1 / 3)  # iteration 0 is not counted
    assert good["curve"] == {"1": pytest.approx(0.3575), "3": pytest.approx(0.715)}
    assert "| good | 4 | 71.5" in markdown(result)
    assert last_window_kinds(tmp_path / "runs" / "good" / "seed-0", 0)["noisy"] == 1


def test_kind_shares_count_the_runs_own_last_window(tmp_path):
    """Windows of one iteration (experiments/curriculum-lab-every-iteration.yaml): the last
    window is the last iteration alone, read from the run's resolved config."""
    runs = [make_run(tmp_path, "random", s, 0.4, ["ordinary", "leaky", "noisy"], interval=1)
            for s in range(2)]
    (tmp_path / "experiment.json").write_text(json.dumps(
        {"spec": {"budget": {"iterations": 4}}, "runs": runs}))
    shares = analyse(tmp_path, reps=20)["arms"]["random"]["kind_share"]
    assert shares == {"ordinary": 0.0, "leaky": 1.0, "noisy": 0.0}  # iteration 3's designs only


def test_designer_figures_and_where_the_curve_flattens(tmp_path):
    moved = {"designer_samples": 4, "designer_nonzero_advantages": 3, "designer_entropy": 1.5}
    stuck = {"designer_samples": 4, "designer_nonzero_advantages": 0, "designer_entropy": 0.5}
    runs = [make_run(tmp_path, "learned", s, 0.5, ["ordinary"], train={1: moved, 3: stuck})
            for s in range(2)]
    runs += [make_run(tmp_path, "random", s, 0.4, ["ordinary"]) for s in range(2)]
    (tmp_path / "experiment.json").write_text(json.dumps(
        {"spec": {"budget": {"iterations": 4}}, "runs": runs}))
    arms = analyse(tmp_path, reps=20)["arms"]
    learned, rand = arms["learned"], arms["random"]
    assert learned["designer_entropy"] == 0.5  # after the last update
    assert learned["nonzero_update_share"] == 0.5  # one update of two moved the policy
    # two rows, one duplicate, windows of two iterations: one window of two rows
    assert learned["duplicates_per_window"] == 1.0
    assert rand["designer_entropy"] is None and rand["nonzero_update_share"] is None
    assert learned["flat_from"] is None  # 0.25 -> 0.5: still rising at the end
    assert "| rising | 0.50 | 50% | 1.00 |" in markdown({"arms": arms})
    assert "| rising | – | – | 1.00 |" in markdown({"arms": arms})
    assert flat_from({0: 0.2, 2: 0.5, 4: 0.505, 6: 0.5}) == 2
    assert flat_from({0: 0.2, 2: 0.5, 4: 0.6}) is None
