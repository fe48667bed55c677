"""spade_core/experiment/spec.py: experiment files checked with their keys; the shipped ones
valid."""

from __future__ import annotations

import pytest

from spade_core.errors import ConfigError
from spade_core.experiment.spec import load_spec

from fakes.experiment import write_experiment


@pytest.mark.parametrize("change, message", [
    ({"reference_arm": "other"}, "reference_arm 'other' is not one of the arms"),
    ({"arms": {"ref": ["run.seed=3"]}}, "'run.seed' is set by the experiment itself"),
    ({"budget": {"iterations": 2, "steps": 3}}, "budget.steps"),
])
def test_bad_experiment_files_are_refused_with_their_key(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_spec(write_experiment(tmp_path, **change))


@pytest.mark.parametrize("name", ["paper-games", "paper-tool-use", "cpu-spade-vs-fixed",
                                  "learning", "cpu-learning"])
def test_shipped_experiment_files_are_valid(name):
    from pathlib import Path

    spec, base = load_spec(Path("experiments") / f"{name}.yaml")
    assert base.is_file() and spec.reference_arm in spec.arms
