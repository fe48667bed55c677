"""spade_core/experiment/compute.py: the compute of a run, cumulated per iteration."""

from __future__ import annotations

from spade_core.experiment.compute import cumulative


def test_compute_is_cumulated_per_iteration():
    rows = [{"iteration": 0, "train": {"agent_samples_trained": 4.0, "optimizer_steps": 1.0},
             "tokens": {"designer": 100, "agent": 30, "eval": 8}},
            {"iteration": 1, "train": {}, "tokens": {"agent": 20}}]
    first, second = cumulative(rows)
    assert first["tokens_total"] == 130.0 and first["tokens_eval"] == 8.0
    assert second == {**second, "iterations": 2.0, "agent_samples": 4.0, "optimizer_steps": 1.0,
                      "tokens_agent": 50.0, "tokens_total": 150.0}
