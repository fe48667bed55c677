"""Components that break their contracts (or keep them), for the contract checker's and the
registry's tests: estimators that set the loop's regret, log a figure that is no number or flag
a mask with a number, trainers missing a method or their base class."""

from __future__ import annotations

import math

from spade_core.hookspecs import hookimpl
from spade_core.interfaces import DifficultyEstimator, Trainer
from spade_core.records import Difficulty


class FakeMeanGapEstimator(DifficultyEstimator):
    def estimate(self, data):  # noqa: ANN001, ANN201
        hinted, unhinted = data.hinted, data.unhinted
        gap = (sum(hinted) / max(len(hinted), 1)) - (sum(unhinted) / max(len(unhinted), 1))
        return Difficulty(figures={}, designer_reward=max(gap, 0.0))


class FakeOwnRegretEstimator(DifficultyEstimator):
    """Sets ``regret`` itself, which is the loop's: the checker must refuse it."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        return Difficulty(figures={}, designer_reward=0.0, regret=0.25)


class FakeNanFigureEstimator(DifficultyEstimator):
    """Right without a window; over a window logs a figure that is no number."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        return Difficulty(figures={"spread": math.nan if data.window else 0.0},
                          designer_reward=0.0)


class FakeMaskFlagEstimator(DifficultyEstimator):
    """Says "do not train" with a number instead of ``train=False``."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        return Difficulty(figures={}, designer_reward=0.0, train=0)


class FakeHalfTrainer(Trainer):
    """Has no ``train``: building it must fail, naming what is missing."""

    def save(self, directory):  # noqa: ANN001, ANN201
        pass


class FakeDuckTrainer:
    """Has every method a trainer needs but does not subclass ``Trainer``: refused when built."""

    def train(self, samples):  # noqa: ANN001, ANN201
        return {}


class FakeEstimatorPlugin:
    @hookimpl
    def register_difficulty_estimators(self, register):  # noqa: ANN001, ANN201
        register("fake-mean-gap", lambda o, c: FakeMeanGapEstimator())
        register("fake-own-regret", lambda o, c: FakeOwnRegretEstimator())
        register("fake-nan-figure", lambda o, c: FakeNanFigureEstimator())
        register("fake-mask-flag", lambda o, c: FakeMaskFlagEstimator())

    @hookimpl
    def register_trainers(self, register):  # noqa: ANN001, ANN201
        register("fake-half", lambda o, c: FakeHalfTrainer())
        register("fake-duck", lambda o, c: FakeDuckTrainer())
