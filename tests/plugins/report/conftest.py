"""A small experiment on the fake self-play loop, run once for the experiment page's tests and
its browser test (``fakes.experiment.run_known_experiment``)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def known_experiment(tmp_path_factory):
    """The folder of the finished experiment (``results.json``, ``runs/<arm>/seed-<s>/``)."""
    from fakes.experiment import run_known_experiment

    return run_known_experiment(tmp_path_factory.mktemp("known-experiment"))
