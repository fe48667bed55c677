"""spade_core/testing.py: the contract checker passes a component that keeps its kind's contract and
fails what breaks it."""

from __future__ import annotations

import pytest

from spade_core.interfaces import DifficultyEstimator
from spade_core.testing import check_component, load_test_plugins

from fakes.contracts import FakeEstimatorPlugin


def test_the_checker_passes_a_subclass_and_refuses_a_missing_regret():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    assert isinstance(check_component(loaded, "difficulty_estimator", "fake-mean-gap"),
                      DifficultyEstimator)
    with pytest.raises(AssertionError, match="regret"):
        check_component(loaded, "difficulty_estimator", "fake-no-regret")


def test_the_checker_refuses_a_regret_that_is_not_hinted_minus_unhinted_mean():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    with pytest.raises(AssertionError, match="regret is 0.25, expected the mean hinted minus"):
        check_component(loaded, "difficulty_estimator", "fake-copied-figures")
    with pytest.raises(AssertionError, match=r"over a window.*pooled over the window"):
        check_component(loaded, "difficulty_estimator", "fake-unpooled")
