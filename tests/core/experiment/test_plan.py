"""spade_core/experiment/plan.py: the planned runs' configs."""

from __future__ import annotations

import yaml

from spade_core.experiment.spec import load_spec

from fakes.experiment import write_experiment


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
