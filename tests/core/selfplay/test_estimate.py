"""Estimating difficulty (spade_core.selfplay.estimate): ``estimate()`` on fake proposals (a
played one by the estimator over its plays and its earlier history, the loop's regret filled in;
a duplicate kept, an unplayed one rejected); then, through the real loop with fakes, the
estimator chosen sets the designer reward, and an estimate that breaks the contract names its
estimator."""

from __future__ import annotations

import copy
import re
from types import SimpleNamespace

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.config.load import resolve_config
from plugins.difficulty_estimators import Regret, RegretOptions
from spade_core.config.schema import LoopSection
from spade_core.errors import PluginError
from spade_core.records import EnvRecord, EnvStatus, Episode, Verdict
from spade_core.selfplay.estimate import estimate
from spade_core.selfplay.run_loop import run
from spade_core.testing import load_test_plugins

from fakes.selfplay import (
    FAKE_RUN_CONFIG,
    FakeDictMemory,
    FakeSelfPlayPlugin,
    accepted_proposal,
    make_run,
    metrics,
    qa_program,
)


def _episodes(*rewards: float, hinted: bool = False) -> list[Episode]:
    return [Episode(env_id="", seed=k, hinted=hinted, first_observation="", reward=r)
            for k, r in enumerate(rewards)]


def test_estimate_sets_the_played_difficulty_and_rejects_the_unplayed():
    class FakeHistoryRegret(Regret):
        """Regret, recording the history each estimate saw."""

        seen = []

        def estimate(self, data):
            self.seen.append([h.iteration for h in data.history])
            return super().estimate(data)

    memory = FakeDictMemory()
    played = accepted_proposal(qa_program("six times seven"))
    memory.add(EnvRecord(id=played.env_id, source=played.program, family="fake-qa",
                         status=EnvStatus.FRONTIER))
    memory.update_stats(played.env_id, 1, [1.0], [0.0], {}, 1.0)
    memory.update_stats(played.env_id, 2, [1.0], [0.0], {}, 1.0)  # a later iteration: not seen
    played.unhinted, played.hinted = _episodes(0.0, 1.0), _episodes(1.0, 1.0, hinted=True)
    duplicate = accepted_proposal(qa_program("forty two"), index=1)
    duplicate.refuse_as_duplicate("other", 0.95)
    timed_out = accepted_proposal("class SlowEnv: ...", index=2)
    timed_out.reject(Verdict(False, "timeout", "reset() took too long"))
    unplayed = accepted_proposal(qa_program("seven sixes"), index=3)  # accepted, never played
    c = SimpleNamespace(estimator=FakeHistoryRegret(RegretOptions()), memory=memory,
                        estimator_label="regret")
    loop = LoopSection()
    estimate(c, loop, [played, duplicate, timed_out, unplayed], iteration=2)
    # The loop's regret: mean hinted 1.0 minus mean unhinted 0.5, mirrored in the figures.
    assert played.difficulty.regret == 0.5 == played.difficulty.figures["regret"]
    assert played.difficulty.designer_reward == 0.5 and played.difficulty.train
    assert played.difficulty.figures["win_rate"] == 0.5
    assert FakeHistoryRegret.seen == [[1]]  # the memory's history before this iteration
    assert duplicate.difficulty is None and duplicate.status == EnvStatus.DUPLICATE
    assert timed_out.status == unplayed.status == EnvStatus.REJECTED
    assert timed_out.verdict.category == "timeout"  # its verdict kept, for its reward


@pytest.mark.parametrize("estimator,expected", [
    ("regret", 1.0), ("blend", 0.4 * 1.0 + 0.6 * 0.0), ("learnability", 0.0),
    ("solve-rate", 0.0), ("learning-progress-per-step", 1.0), ("frontier", 0.0),
    # Per skill (the reference's trackers): no earlier mean, baseline 0, unhinted mean 0.
    ("learning-progress", 0.0),
    # Per environment: a first play is a cold start, max(regret, 0).
    ({"plugin": "learning-progress", "options": {"baseline": "environment"}}, 1.0),
], ids=["regret", "blend", "learnability", "solve-rate", "lp-per-step", "frontier", "lp-skill",
        "lp-environment"])
def test_switching_estimator_changes_designer_reward(tmp_path, estimator, expected):
    run_dir, _ = make_run(tmp_path, {"estimator": estimator})
    assert metrics(run_dir)[0]["mean_designer_reward"] == pytest.approx(expected)


def _regret_set_by_the_estimator():
    from spade_core.records import Difficulty

    return Difficulty(figures={}, designer_reward=0.0, regret=0.5)  # the loop's to set


def _nan_reward():
    from spade_core.records import Difficulty

    return Difficulty(figures={}, designer_reward=float("nan"))


def _no_difficulty():
    return {"designer_reward": 0.5}


@pytest.mark.parametrize("difficulty,says", [
    (_regret_set_by_the_estimator, r"estimate\(\) returned regret=0.5: regret is set by the "
                                   r"loop; an estimate is Difficulty\(figures=\.\.\., "
                                   r"designer_reward=\.\.\.\), train=False"),
    (_nan_reward, r"estimate\(\) returned designer_reward=nan, not a finite number"),
    (_no_difficulty, r"estimate\(\) returned a dict, not a Difficulty"),
])
def test_a_broken_estimate_names_the_estimator_once_and_suggests_no_resume(
        tmp_path, difficulty, says):
    class Broken(FakeSelfPlayPlugin):
        from spade_core.hookspecs import hookimpl

        @hookimpl
        def register_difficulty_estimators(self, register):
            from spade_core.interfaces import DifficultyEstimator

            class Forgetful(DifficultyEstimator):
                def estimate(self, data):
                    return difficulty()

            register("forgetful", lambda o, c: Forgetful())

    loaded = load_test_plugins(Broken(), designer_plugin, trainers_plugin,
                               distribution="spade-forgetful")
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"]["dir"] = str(tmp_path / "run")
    data["estimator"] = "forgetful"
    said = []
    with pytest.raises(PluginError) as err:
        run(resolve_config(data, loaded.registry, "test.yaml"), loaded, report=said.append)
    assert re.match(r"difficulty estimator 'forgetful' \(plugin '\w+' from spade-forgetful "
                    r"0\): " + says, str(err.value))
    assert "Forgetful" not in str(err.value)  # the registered name, not the Python class
    end = said[-1]
    assert "spade: run failed after 0 of 2 iterations" in end
    assert "estimate()" not in end and "error" not in end  # the caller prints it, once
    assert "--resume" not in end  # a resume would meet the same estimator
