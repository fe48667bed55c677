"""Components that break their contracts (or keep them), for the contract checker's and the
registry's tests: estimators with a wrong or missing regret, trainers missing a method or their base
class."""

from __future__ import annotations

import math

from spade_core.hookspecs import hookimpl
from spade_core.interfaces import DifficultyEstimator, Trainer
from spade_core.records import Difficulty


class FakeMeanGapEstimator(DifficultyEstimator):
    def estimate(self, data):  # noqa: ANN001, ANN201
        hinted, unhinted = data.hinted, data.unhinted
        gap = (sum(hinted) / max(len(hinted), 1)) - (sum(unhinted) / max(len(unhinted), 1))
        return Difficulty(figures={}, designer_reward=max(gap, 0.0), regret=gap)


class FakeNoRegretEstimator(DifficultyEstimator):
    """Forgets ``regret`` (a NaN): the checker must refuse it."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        return Difficulty(figures={"win_gap": 0.0}, designer_reward=0.0, regret=math.nan)


class FakeCopiedFiguresEstimator(DifficultyEstimator):
    """Copies another result's figures, regret included, and reports that regret: finite and in
    range, but not this input's mean hinted minus mean unhinted reward."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        other = Difficulty(figures={"win_rate": 0.5}, designer_reward=0.0, regret=0.25)
        return Difficulty(figures=dict(other.figures), designer_reward=0.0,
                          regret=other.figures["regret"])


class FakeUnpooledEstimator(DifficultyEstimator):
    """Right without a window; over a window reports the mean of no unhinted rewards at all."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        hinted = sum(data.hinted) / len(data.hinted) if data.hinted else 0.0
        unhinted = data.pooled_unhinted if not data.window else ()
        gap = hinted - (sum(unhinted) / len(unhinted) if unhinted else 0.0)
        return Difficulty(figures={}, designer_reward=0.0, regret=gap)


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
        register("fake-no-regret", lambda o, c: FakeNoRegretEstimator())
        register("fake-copied-figures", lambda o, c: FakeCopiedFiguresEstimator())
        register("fake-unpooled", lambda o, c: FakeUnpooledEstimator())

    @hookimpl
    def register_trainers(self, register):  # noqa: ANN001, ANN201
        register("fake-half", lambda o, c: FakeHalfTrainer())
        register("fake-duck", lambda o, c: FakeDuckTrainer())
