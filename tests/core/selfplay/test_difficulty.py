"""The estimator held to its contract (spade_core.selfplay.difficulty): ``checked_estimate()``
fills the loop's regret (pooled over a window) and refuses an estimate that breaks the contract,
naming the estimator; ``skill_window_means()`` pools each skill's plays per period."""

from __future__ import annotations

import pytest

from spade_core.errors import PluginError
from spade_core.interfaces import DifficultyEstimator, EnvRecord, EstimateInput
from spade_core.records import Difficulty, EnvIteration, EnvProgram
from spade_core.selfplay.difficulty import checked_estimate, skill_window_means

ENV = EnvProgram(source="class XEnv: pass", family="fake")


class _Returns(DifficultyEstimator):
    def __init__(self, result):
        self.result = result

    def estimate(self, data):
        return self.result


def test_the_loop_fills_the_regret_and_mirrors_it_and_the_mask_in_the_figures():
    data = EstimateInput(env=ENV, hinted=[1.0, 1.0], unhinted=[0.0, 1.0])
    kept = checked_estimate(_Returns(Difficulty(figures={"regret": 9.0}, designer_reward=0.3)),
                            data)
    assert kept.regret == 0.5 and kept.figures == {"regret": 0.5, "masked": 0.0}
    masked = checked_estimate(_Returns(Difficulty(figures={}, designer_reward=-0.1,
                                                  train=False)), data)
    assert not masked.train and masked.figures["masked"] == 1.0
    # Over a window the regret pools every unhinted play of the window.
    window = (EnvIteration(4, hinted=[1.0], unhinted=[0.0]), EnvIteration(5, unhinted=[1.0, 1.0]))
    over = EstimateInput(env=ENV, hinted=[1.0], unhinted=[0.0], window=window)
    assert checked_estimate(_Returns(Difficulty(figures={}, designer_reward=0.0)), over
                            ).regret == pytest.approx(1.0 - 2 / 3)


@pytest.mark.parametrize("result,says", [
    (Difficulty(figures={}, designer_reward=0.0, regret=0.5), "regret is set by the loop"),
    (Difficulty(figures={}, designer_reward=float("inf")), "designer_reward=inf"),
    (Difficulty(figures={}, designer_reward=0.0, train=1), "train=1, not True or False"),
    (0.5, "a float, not a Difficulty"),
])
def test_an_estimate_that_breaks_the_contract_is_refused_naming_the_estimator(result, says):
    data = EstimateInput(env=ENV, hinted=[], unhinted=[])
    with pytest.raises(PluginError, match=f"^difficulty estimator 'x': estimate\\(\\) returned "
                                          f".*{says}"):
        checked_estimate(_Returns(result), data, "difficulty estimator 'x'")


def test_a_failing_estimate_names_the_estimator():
    class Raises(DifficultyEstimator):
        def estimate(self, data):
            raise ZeroDivisionError("no plays")

    with pytest.raises(PluginError, match=r"Raises: estimate\(\) failed: ZeroDivisionError"):
        checked_estimate(Raises(), EstimateInput(env=ENV, hinted=[], unhinted=[]))


def test_skill_means_pool_each_periods_plays_per_skill():
    def make_record(env_id, skill, plays):
        return EnvRecord(id=env_id, source="", family="fam", status="frontier", skill=skill,
                         history=[EnvIteration(i, unhinted=u) for i, u in plays])

    records = [make_record("a", "sums", [(0, [1.0]), (2, [0.0])]),
               make_record("b", "sums", [(1, [0.0]), (5, [1.0])]),
               make_record("c", "", [(0, [0.5, 1.0])])]
    assert skill_window_means(records, 2, 1) == {"sums": [0.5, 0.0], "fam": [0.75]}
    assert skill_window_means(records, 1, 0) == {"sums": [1.0], "fam": [0.75]}
