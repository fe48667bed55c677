"""Shared fixtures. Helpers live in ``tests/fakes/`` (importable as ``fakes``: pytest puts
``tests/`` on the path, see ``pyproject.toml``)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from fakes.cli import run_spade

# Property-based tests (hypothesis): bounded and reproducible by default, so `make test` runs the
# same examples every time and quickly. HYPOTHESIS_PROFILE=explore searches longer, at random.
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow],
                          print_blob=True)
settings.register_profile("explore", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def spade():
    return run_spade


@pytest.fixture(scope="module")
def process_sandbox():
    """The real ``process`` sandbox with its default options, one per test module (a test file
    that needs other limits defines its own fixture of this name)."""
    from spade_core.plugins import load_plugins

    box = load_plugins().registry.build("sandbox", "process", {}, "sandbox")
    yield box
    box.close()


@pytest.fixture(scope="session")
def scoring_sandbox():
    """One real process sandbox (two fork servers) shared by the eval-suite tests, which
    generate and score their items in it."""
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    box = build_sandbox(ProcessSandboxOptions(workers=2))
    yield box
    box.close()


@pytest.fixture(scope="session")
def known_experiment(tmp_path_factory):
    """A small experiment on the fake self-play loop, run once for the experiment page's tests
    and its browser test: the folder of the finished experiment (``results.json``,
    ``runs/<arm>/seed-<s>/``; ``fakes.experiment.run_known_experiment``)."""
    from fakes.experiment import run_known_experiment

    return run_known_experiment(tmp_path_factory.mktemp("known-experiment"))
