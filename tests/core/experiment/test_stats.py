"""spade_core/experiment/stats.py: paired differences to the reference arm over seeds and their
Student-t intervals, computed by hand."""

from __future__ import annotations

import math

import pytest

from spade_core.experiment.stats import mean_interval, paired, t_interval

#: Student-t quantile t(0.975, 3 degrees of freedom), from tables.
T_975_3 = 3.182446305284263


def test_the_interval_is_the_mean_plus_minus_t_times_the_standard_error():
    values = [0.1, 0.3, 0.2, 0.6]
    mean = 0.3
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 3)
    out = t_interval(values)
    assert out["n"] == 4 and out["mean"] == pytest.approx(mean) and out["sd"] == pytest.approx(sd)
    half = T_975_3 * sd / 2
    assert (out["low"], out["high"]) == (pytest.approx(mean - half), pytest.approx(mean + half))
    assert out["confidence"] == 0.95


def test_fewer_than_two_seeds_have_no_interval():
    assert t_interval([]) == {"n": 0, "mean": None, "sd": None, "low": None, "high": None,
                              "confidence": 0.95}
    one = t_interval([0.4])
    assert one["mean"] == 0.4 and one["low"] is None and one["high"] is None


def test_differences_are_paired_by_seed_and_only_over_shared_seeds():
    scores = {"ref": {0: 0.25, 1: 0.5, 2: 0.25}, "good": {0: 0.5, 1: 0.5, 3: 0.9},
              "bad": {0: 0.0, 1: 0.25, 2: 0.0}}
    out = paired(scores, "ref")
    assert set(out) == {"good", "bad"}  # not the reference itself
    assert out["good"]["per_seed"] == {"0": 0.25, "1": 0.0}  # seed 3: the reference has none
    assert out["good"]["n"] == 2 and out["good"]["mean"] == pytest.approx(0.125)
    assert out["bad"]["per_seed"] == {"0": -0.25, "1": -0.25, "2": -0.25}
    assert out["bad"]["sd"] == 0.0 and out["bad"]["low"] == pytest.approx(-0.25)


def test_an_arm_s_own_mean_over_seeds():
    out = mean_interval({2: 0.5, 0: 0.25, 1: 0.75})
    assert out["n"] == 3 and out["mean"] == pytest.approx(0.5) and out["low"] < 0.5 < out["high"]
