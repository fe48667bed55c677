"""The report's plots: trainer figures (losses first, at most MAX_TRAIN_PLOTS), pipeline seconds
only when a run has them, and retirements counted cumulatively."""

from __future__ import annotations

import json
import re

from plugins.report.rundata import load_run


def test_trainer_figures_are_plotted_losses_first(tmp_path):
    from plugins.report.plots import MAX_TRAIN_PLOTS, render_plots

    run_dir = tmp_path / "trained"
    run_dir.mkdir()
    train = {f"trl/extra_{i}": float(i) for i in range(12)}
    train.update(loss=0.5, grad_norm=2.0, agent={"mean_reward": 0.25}, note="text is skipped")
    with (run_dir / "metrics.jsonl").open("w") as fh:
        for i in range(3):
            fh.write(json.dumps({"iteration": i, "mean_regret": 0.1, "train": train}) + "\n")
    plot = next(p for p in render_plots(load_run(run_dir)) if p.id == "plot-train")
    titles = re.findall(r"<text[^>]*>([^<]*)</text>", plot.svg)
    titles = [t for t in titles if "/" in t or t in ("loss", "grad_norm")]
    assert titles[:3] == ["loss", "agent/mean_reward", "grad_norm"]
    assert len(titles) == MAX_TRAIN_PLOTS and "note" not in plot.svg


def test_pipeline_seconds_are_plotted_only_when_the_run_has_them(tmp_path):
    from plugins.report.plots import render_plots

    run_dir = tmp_path / "async"
    run_dir.mkdir()
    pipeline = {"generator_busy_seconds": 3.0, "generator_idle_seconds": 0.5,
                "trainer_busy_seconds": 2.0, "trainer_idle_seconds": 1.5, "staleness_max": 1}
    with (run_dir / "metrics.jsonl").open("w") as fh:
        for i in range(2):
            fh.write(json.dumps({"iteration": i, "pipeline": pipeline,
                                 "train": {"tis_mean_weight": 0.97}}) + "\n")
    plot = next(p for p in render_plots(load_run(run_dir)) if p.id == "plot-pipeline")
    for label in ("generator idle", "trainer busy", "staleness max", "mean importance weight"):
        assert label in plot.svg
    (run_dir / "metrics.jsonl").write_text(json.dumps({"iteration": 0, "mean_regret": 0.1}))
    assert "plot-pipeline" not in [p.id for p in render_plots(load_run(run_dir))]


def test_pool_plot_counts_retirements_cumulatively():
    from plugins.report.plots import _cumulative

    rows = [{"iteration": 0, "envs_retired": 1}, {"iteration": 1}, {"iteration": 2,
                                                                    "envs_retired": 0},
            {"iteration": 3, "envs_retired": 2}]
    assert _cumulative(rows, "envs_retired") == ([0, 2, 3], [1.0, 1.0, 3.0])
