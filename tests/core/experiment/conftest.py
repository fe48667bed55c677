"""The experiment tests' shared run: one experiment killed in its third run and run again, once for
the folder (the runner's and the results' tests read it). Session-scoped, visible in this folder
only: a pytest-xdist worker (`make test`) goes back and forth between folders, and a
package-scoped fixture would be made again each time it comes back."""

from __future__ import annotations

import json

import pytest

from spade_core.experiment.runner import run_experiment

from fakes.experiment import FakeInterruptPlugin, write_experiment
from fakes.experiment import experiment_plugins as loaded


@pytest.fixture(scope="session")
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
