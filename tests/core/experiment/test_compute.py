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


def test_samples_are_read_from_what_every_trainer_reports():
    """``*_samples_trained`` where the trainer reports it (GRPO), else ``*_samples`` (the lab
    trainer; every trainer reports it)."""
    [lab] = cumulative([{"iteration": 0, "train": {"agent_samples": 24.0, "designer_samples": 6.0,
                                                   "optimizer_steps": 1.0}}])
    assert (lab["agent_samples"], lab["designer_samples"], lab["optimizer_steps"]) == (24, 6, 1)
    [grpo] = cumulative([{"iteration": 0, "train": {"agent_samples": 24.0,
                                                    "agent_samples_trained": 20.0}}])
    assert grpo["agent_samples"] == 20.0
