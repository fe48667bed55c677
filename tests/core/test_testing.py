"""spade_core/testing.py: the contract checker passes a component that keeps its kind's contract and
fails what breaks it."""

from __future__ import annotations

import pytest

from spade_core.interfaces import DifficultyEstimator
from spade_core.testing import check_component, load_test_plugins

from fakes.contracts import FakeEstimatorPlugin


def test_the_checker_passes_a_subclass_and_refuses_an_estimator_that_sets_the_regret():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    assert isinstance(check_component(loaded, "difficulty_estimator", "fake-mean-gap"),
                      DifficultyEstimator)
    with pytest.raises(AssertionError, match="returned regret=0.25: regret is set by the loop"):
        check_component(loaded, "difficulty_estimator", "fake-own-regret")


def test_the_checker_refuses_a_figure_that_is_no_number_and_a_mask_that_is_no_bool():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    with pytest.raises(AssertionError, match=r"over a window .* figure 'spread'=nan"):
        check_component(loaded, "difficulty_estimator", "fake-nan-figure")
    with pytest.raises(AssertionError, match="returned train=0, not True or False"):
        check_component(loaded, "difficulty_estimator", "fake-mask-flag")
