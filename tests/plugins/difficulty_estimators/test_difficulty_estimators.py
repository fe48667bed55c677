"""Estimators with history: the one ``estimate(data)`` call with its versioned input, the loop
handing each environment its earlier iterations, and the history-aware built-ins' formulas on
hand-made histories (``docs/estimators.md``), and the field's curriculum signals on inputs worked
out by hand against each paper's formula."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
import types

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
from plugins.difficulty_estimators import (AlphaCurriculum, AlphaCurriculumOptions, Learnability,
                                           _Options)
import plugins.trainers.plugin as trainers_plugin
from spade_core.components import BuildContext
from spade_core.config.load import resolve_config
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import (
    ESTIMATOR_INTERFACE_VERSION,
    DifficultyEstimator,
    EnvIteration,
    EstimateInput,
)
from spade_core.records import Difficulty, EnvProgram
from spade_core.selfplay.difficulty import checked_estimate
from spade_core.selfplay.run_loop import run
from spade_core.testing import check_component, load_test_plugins

from fakes.cli import ROOT
from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin

ENV = EnvProgram(source="class XEnv: pass\n", family="test")
HISTORY_AWARE = ("learning-progress", "learning-progress-per-step", "frontier")


def build(name: str, threshold: float = 1.0, **options) -> DifficultyEstimator:
    """A built-in estimator with ``options`` over its defaults."""
    component = load_test_plugins(estimators_plugin).registry.components[
        ("difficulty_estimator", name)]
    return component.build(component.options.model_validate(options),
                           BuildContext(success_threshold=threshold))


def play(iteration: int, unhinted: list[float], hinted: list[float] | None = None
         ) -> EnvIteration:
    return EnvIteration(iteration, hinted=list(hinted or [1.0] * len(unhinted)),
                        unhinted=list(unhinted))


def estimate(estimator, unhinted, history=(), hinted=None, iteration=9) -> Difficulty:
    """The estimate as the loop records it (held to the contract, the loop's regret filled)."""
    hinted = [1.0] * len(unhinted) if hinted is None else hinted
    return checked_estimate(estimator, EstimateInput(
        env=ENV, hinted=hinted, unhinted=unhinted, iteration=iteration, history=history))


# -- the interface ---------------------------------------------------------------------------


def test_the_input_is_versioned_frozen_and_copies_the_history():
    earlier = play(0, [0.0, 1.0])
    data = EstimateInput(env=ENV, hinted=[1, 1], unhinted=[0, 1], iteration=1, history=[earlier],
                         success_threshold=0.5)
    assert data.version == ESTIMATOR_INTERFACE_VERSION == 1
    assert data.hinted == (1.0, 1.0) and data.unhinted == (0.0, 1.0)
    assert data.history == (earlier,) and data.history[0] is not earlier
    data.history[0].unhinted.append(5.0)  # an estimator scribbling on its input ...
    assert earlier.unhinted == [0.0, 1.0]  # ... cannot change the memory's record
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.iteration = 2  # type: ignore[misc]


class FakeHistoryCounter(DifficultyEstimator):
    """Reads the history and the iteration from its input."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        return Difficulty(figures={"earlier": float(len(data.history))},
                          designer_reward=float(data.iteration))


def test_an_estimator_reads_the_history_and_iteration_from_its_input():
    result = estimate(FakeHistoryCounter(), [0.0], history=[play(0, [0.0]), play(1, [1.0])],
                      iteration=2)
    assert result.figures["earlier"] == 2.0 and result.designer_reward == 2.0
    assert estimate(FakeHistoryCounter(), [1.0]).figures["earlier"] == 0.0


def test_an_estimator_without_estimate_is_refused():
    class FakeNothing(DifficultyEstimator):
        pass

    with pytest.raises(TypeError, match="estimate"):
        FakeNothing()


# -- the contract checker --------------------------------------------------------------------


@pytest.mark.parametrize("name", HISTORY_AWARE)
def test_the_history_aware_builtins_pass_the_contract_checker(name):
    check_component(load_test_plugins(estimators_plugin), "difficulty_estimator", name)


class FakeBreaksWithHistory(DifficultyEstimator):
    """Fine on a first play, NaN once there is history: only a check with history catches it."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        reward = math.nan if data.history else 0.0
        return Difficulty(figures={}, designer_reward=reward)


class FakeBreaksWithHistoryPlugin:
    @hookimpl
    def register_difficulty_estimators(self, register):  # noqa: ANN001, ANN201
        register("fake-breaks", lambda o, c: FakeBreaksWithHistory())


def test_the_checker_exercises_estimators_with_a_history():
    loaded = load_test_plugins(FakeBreaksWithHistoryPlugin())
    with pytest.raises(AssertionError, match=r"estimate\(\) after 1 earlier"):
        check_component(loaded, "difficulty_estimator", "fake-breaks")


# -- learning-progress -----------------------------------------------------------------------


def test_learning_progress_against_the_slow_average_of_earlier_means():
    history = [play(0, [0.0, 0.0]), play(1, [0.0, 1.0]), play(2, [1.0, 1.0])]
    # gamma 0.5: baseline 0 -> 0.5*0 + 0.5*0.5 = 0.25 -> 0.5*0.25 + 0.5*1 = 0.625.
    result = estimate(build("learning-progress", baseline="environment", baseline_gamma=0.5,
                            fast_gamma=0.9), [0.0, 0.5], history)
    assert result.figures["baseline"] == pytest.approx(0.625)
    assert result.figures["progress"] == pytest.approx(0.25 - 0.625)
    assert result.designer_reward == pytest.approx(0.375)  # forgetting counts, as |.|
    assert result.figures["cold_start"] == 0.0 and result.regret == pytest.approx(0.75)
    # Default gamma 0.95: 0 -> 0.475 -> 0.05*0.475 + 0.95 = 0.97375.
    result = estimate(build("learning-progress", baseline="environment"), [0.0, 0.5], history)
    assert result.figures["baseline"] == pytest.approx(0.97375)
    assert result.designer_reward == pytest.approx(0.97375 - 0.25)


def test_learning_progress_cold_start():
    estimator = build("learning-progress", baseline="environment")
    first = estimate(estimator, [0.0, 0.0, 0.0, 0.0], hinted=[1.0, 1.0, 0.0, 0.0])
    assert first.figures["cold_start"] == 1.0 and first.designer_reward == 0.5  # max(regret, 0)
    assert first.figures["progress"] == 0.0 and first.figures["baseline"] == 0.0
    worse_with_hint = estimate(estimator, [1.0, 1.0], hinted=[0.0, 0.0])
    assert worse_with_hint.designer_reward == 0.0
    # An earlier entry without unhinted rewards is no play: still a cold start.
    assert estimate(estimator, [0.0], [play(0, [])], hinted=[1.0]).figures["cold_start"] == 1.0
    zero = build("learning-progress", baseline="environment", cold_start="zero")
    assert estimate(zero, [0.0], hinted=[1.0]).designer_reward == 0.0


# -- learning-progress-per-step --------------------------------------------------------------


def test_learning_progress_per_step_fits_a_weighted_line():
    history = [play(0, [0.0, 0.0]), play(1, [0.0, 1.0])]
    # Points (iteration, mean, episodes): (0, 0, 2), (1, 0.5, 2), (3, 1, 4). Weighted means:
    # x 14/8, y 5/8; sum w dx^2 = 13.5, sum w dx dy = 4.25: slope 17/54, over 3 iterations 17/18.
    result = estimate(build("learning-progress-per-step", progress="slope"), [1.0] * 4, history,
                      iteration=3)
    assert result.figures["progress_per_iteration"] == pytest.approx(17 / 54)
    assert result.figures["progress"] == pytest.approx(17 / 18)
    assert result.designer_reward == pytest.approx(17 / 18)
    assert result.figures["recent_plays"] == 3.0 and result.figures["cold_start"] == 0.0
    # The latest 2 plays: the line through the last two means, 0.5 -> 1.0.
    two = estimate(build("learning-progress-per-step", progress="slope", recent_plays=2),
                   [1.0] * 4, history, iteration=3)
    assert two.figures["progress_per_iteration"] == pytest.approx(0.25)
    assert two.designer_reward == pytest.approx(0.5)


def test_learning_progress_per_step_floors_a_decline_unless_signed():
    history = [play(4, [1.0, 1.0]), play(5, [1.0, 0.0])]
    # The reference's late - early: early half (iteration 4: [1, 1]) mean 1, late half
    # (iterations 5, 6: [1, 0, 0, 0]) mean 0.25: -0.75, floored at 0 unless signed.
    falling = estimate(build("learning-progress-per-step"), [0.0, 0.0], history, iteration=6)
    assert falling.figures["progress"] == pytest.approx(-0.75) and falling.designer_reward == 0.0
    assert falling.figures["early_mean"] == 1.0 and falling.figures["late_mean"] == 0.25
    signed = estimate(build("learning-progress-per-step", signed=True), [0.0, 0.0], history,
                      iteration=6)
    assert signed.designer_reward == pytest.approx(-0.75)
    # The fitted line: (4, 1), (5, 0.5), (6, 0): slope -0.5 over 2 iterations = -1.
    sloped = estimate(build("learning-progress-per-step", progress="slope", signed=True),
                      [0.0, 0.0], history, iteration=6)
    assert sloped.designer_reward == pytest.approx(-1.0)


def test_learning_progress_per_step_cold_start():
    estimator = build("learning-progress-per-step")
    first = estimate(estimator, [0.0, 0.0], hinted=[1.0, 0.0])
    assert first.figures["cold_start"] == 1.0 and first.designer_reward == 0.5
    assert first.figures["recent_plays"] == 1.0
    zero = build("learning-progress-per-step", cold_start="zero")
    assert estimate(zero, [0.0, 0.0], hinted=[1.0, 0.0]).designer_reward == 0.0


# -- frontier --------------------------------------------------------------------------------


def test_frontier_pools_the_win_rate_over_the_recent_plays():
    history = [play(0, [0.0, 0.0, 0.0, 0.0]), play(1, [0.0, 0.0])]
    result = estimate(build("frontier"), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], history)
    assert result.figures["recent_win_rate"] == 0.5 and result.figures["recent_episodes"] == 12
    assert result.designer_reward == 1.0
    last_two = estimate(build("frontier", recent_plays=2), [1.0] * 6, history)
    assert last_two.figures["recent_win_rate"] == 0.75
    assert last_two.designer_reward == pytest.approx(4 * 0.75 * 0.25)
    # First play: the current win rate alone (no special rule).
    assert estimate(build("frontier"), [1.0, 1.0]).designer_reward == 0.0
    assert estimate(build("frontier"), [1.0, 0.0, 0.0, 0.0]).designer_reward == 0.75


def test_frontier_uses_the_run_success_threshold():
    result = estimate(build("frontier", threshold=0.5), [0.6, 0.4], [play(0, [0.9, 0.1])])
    assert result.figures["recent_win_rate"] == 0.5 and result.designer_reward == 1.0


# -- the loop --------------------------------------------------------------------------------


class FakeRecordingEstimator(DifficultyEstimator):
    """Records what the loop hands it; rewards like ``regret``."""

    def __init__(self):
        self.inputs: list[EstimateInput] = []

    def estimate(self, data):  # noqa: ANN001, ANN201
        self.inputs.append(data)
        gap = sum(data.hinted) / len(data.hinted) - sum(data.unhinted) / len(data.unhinted)
        return Difficulty(figures={}, designer_reward=gap)


class FakeRecordingPlugin:
    def __init__(self):
        self.estimators: list[FakeRecordingEstimator] = []

    def _build(self, options, context):  # noqa: ANN001, ANN202
        self.estimators.append(FakeRecordingEstimator())
        return self.estimators[-1]

    @hookimpl
    def register_difficulty_estimators(self, register):  # noqa: ANN001, ANN201
        register("fake-recording", self._build)


def _run(tmp_path, estimator, *extra):
    """Two iterations of the fake loop: the same two documents, so the same two programs, come
    back in iteration 1 (proposed again, or replayed) and are played with one earlier iteration."""
    loaded = load_test_plugins(FakeSelfPlayPlugin(), designer_plugin, estimators_plugin,
                               trainers_plugin, *extra)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"]["dir"] = str(tmp_path / "run")
    data["loop"]["success_threshold"] = 0.5
    data["estimator"] = estimator
    run_dir = run(resolve_config(data, loaded.registry, "test.yaml"), loaded,
                  report=lambda message: None)
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_the_loop_hands_each_environment_its_earlier_iterations(tmp_path):
    recorder = FakeRecordingPlugin()
    _run(tmp_path, "fake-recording", recorder)
    inputs = recorder.estimators[0].inputs
    first = [d for d in inputs if d.iteration == 0]
    second = [d for d in inputs if d.iteration == 1]
    assert len(first) == 2 and second
    assert all(d.history == () and d.success_threshold == 0.5 for d in first)
    for data in second:
        [earlier] = data.history
        assert earlier.iteration == 0
        # The scripted agent is right only with the hint (3 rollouts each).
        assert earlier.unhinted == [0.0] * 3 and earlier.hinted == [1.0] * 3
        assert earlier.figures["regret"] == 1.0 and earlier.designer_reward == 1.0
    assert {d.env.source for d in second} <= {d.env.source for d in first}


@pytest.mark.slow
def test_a_replayed_environment_gets_its_history_from_the_faiss_memory(tmp_path):
    """The real memory and sandbox of tests/core/selfplay/test_environments.py: A is proposed in
    iteration 0 and replayed in iteration 1, once the scripted agent has learned it."""
    import envmemory.plugin as envmemory_plugin
    import sandbox.plugin as sandbox_plugin

    recorder = FakeRecordingPlugin()
    loaded = load_test_plugins(FakeSelfPlayPlugin(texts=("six times seven", "forty two"),
                                                  learn_after=4),
                               designer_plugin, trainers_plugin, envmemory_plugin,
                               sandbox_plugin, recorder)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=2)
    data["loop"] = {"envs_per_iteration": 1, "rollouts_per_env": 2, "max_turns": 1,
                    "replay_envs": 2}
    data["sandbox"] = {"plugin": "process", "options": {"workers": 1}}
    data["memory"] = {"plugin": "faiss", "options": {
        "embedder": "hashing", "structural_match": False, "mastery_rollouts": 2,
        "too_hard_rollouts": 50}}
    data["estimator"] = "fake-recording"
    run(resolve_config(data, loaded.registry, "test.yaml"), loaded, report=lambda message: None)
    inputs = recorder.estimators[0].inputs
    [first] = [d for d in inputs if d.iteration == 0]
    [replayed] = [d for d in inputs if d.iteration == 1 and d.env.source == first.env.source]
    assert first.history == ()
    [earlier] = replayed.history
    assert earlier.iteration == 0 and earlier.unhinted == list(first.unhinted) == [0.0, 0.0]
    assert replayed.unhinted == (1.0, 1.0)  # learned by practice since


def test_learning_progress_in_the_loop(tmp_path):
    rows = _run(tmp_path, {"plugin": "learning-progress", "options": {"baseline": "environment"}})
    # Iteration 0: first plays, cold start max(regret, 0) = 1. Iteration 1: the same programs
    # again, unhinted mean 0 then and now: no progress.
    assert [r["mean_designer_reward"] for r in rows] == [1.0, 0.0]


def test_learning_progress_per_skill_trackers():
    """The reference's per-skill trackers (the default): the slow average of the skill's means,
    updated before the reward over a window, after it in an immediate estimate."""
    estimator = build("learning-progress", baseline_gamma=0.85, fast_gamma=0.98)
    assert estimator.uses_skill_means
    window = [play(8, [0.0, 1.0]), play(9, [1.0, 1.0, 1.0])]
    data = EstimateInput(env=ENV, hinted=[1.0, 1.0], unhinted=[0.0, 1.0], iteration=9,
                         window=window, skill_means=[0.2, 0.6])
    result = estimator.estimate(data)
    # mu_slow: 0.2 -> 0.15 * 0.2 + 0.85 * 0.6 = 0.54; mu_fast: 0.02 * 0.2 + 0.98 * 0.6 = 0.592.
    # Reward |mean of the 5 window plays (0.8) - 0.54| = 0.26; signed LP (0.592 - 0.54) /
    # (2 * (0.98 - 0.85)) = 0.2.
    assert result.figures["baseline"] == pytest.approx(0.54)
    assert result.designer_reward == pytest.approx(0.26)
    assert result.figures["signed_lp"] == pytest.approx(0.2)
    # Immediate: the baseline before this period's mean (0.2), reward |0.5 - 0.2| = 0.3; with no
    # earlier period the baseline is 0 (the reference's get_baseline of a fresh tracker).
    immediate = EstimateInput(env=ENV, hinted=[1.0, 1.0], unhinted=[0.0, 1.0], iteration=9,
                              skill_means=[0.2, 0.6])
    assert estimator.estimate(immediate).designer_reward == pytest.approx(0.3)
    first = EstimateInput(env=ENV, hinted=[1.0], unhinted=[0.0, 1.0], skill_means=[0.5])
    assert estimator.estimate(first).designer_reward == pytest.approx(0.5)
    with pytest.raises(ValueError, match="fast_gamma"):
        build("learning-progress", baseline_gamma=0.95, fast_gamma=0.9)


# -- the guide's history-aware example -------------------------------------------------------


def _guide_module() -> types.ModuleType:
    """``spade_gap.py`` from docs/plugins.md with step 6's ``GapTrend`` appended, as a module
    (the pip-installed package itself is tests/core/test_thirdparty.py's)."""
    text = (ROOT / "docs" / "plugins.md").read_text()
    package = re.search(r"```python file=spade_gap.py\n(.*?)```", text, flags=re.S).group(1)
    [trend] = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
               if "class GapTrend" in b]
    [registration] = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
                      if 'register("gap-trend"' in b]
    module = types.ModuleType("spade_gap_guide")
    exec(compile(package + "\n" + trend, "docs/plugins.md", "exec"), module.__dict__)
    hook = "def register_difficulty_estimators(register):\n"
    exec(compile(hook + registration, "docs/plugins.md", "exec"), module.__dict__)
    module.register_difficulty_estimators = hookimpl(module.register_difficulty_estimators)
    return module


def test_the_guide_history_example_passes_the_checker_and_reads_the_history():
    module = _guide_module()
    trend = check_component(load_test_plugins(module), "difficulty_estimator", "gap-trend")
    first = estimate(trend, [0.0, 0.0], hinted=[1.0, 0.0])
    assert first.designer_reward == 0.5 and "win_rise" not in first.figures
    later = estimate(trend, [1.0, 0.0], [play(0, [0.0, 0.0])], hinted=[1.0, 1.0])
    assert later.figures["win_rise"] == 0.5 and later.designer_reward == 0.5 + 0.5


# -- the field's curriculum signals, on inputs worked out by hand against each paper's formula ---

SIGNALS_ENV = EnvProgram(source="class E: pass", family="f")


def reward(estimator, unhinted, hinted=(1.0, 1.0)):
    return estimator.estimate(EstimateInput(env=SIGNALS_ENV, hinted=hinted, unhinted=unhinted)
                              ).designer_reward


def test_alpha_curriculum_is_exp_of_minus_beta_times_the_squared_gap_to_alpha():
    # GenEnv (arXiv 2512.19682): R = exp(-beta * (p - alpha)^2).
    est = AlphaCurriculum(AlphaCurriculumOptions(alpha=0.5, beta=2.0))
    assert reward(est, [1.0, 0.0, 1.0, 0.0]) == 1.0                    # p = 0.5
    assert reward(est, [1.0, 0.0, 0.0, 0.0]) == pytest.approx(math.exp(-2.0 * 0.0625))  # 0.25
    assert reward(est, [0.0, 0.0]) == pytest.approx(math.exp(-0.5))      # p = 0
    sharp = AlphaCurriculum(AlphaCurriculumOptions(alpha=0.25, beta=10.0))
    assert reward(sharp, [1.0, 1.0, 1.0, 1.0]) == pytest.approx(math.exp(-10.0 * 0.5625))


def test_learnability_is_azr_one_minus_mean_success_strictly_inside_0_1():
    # Absolute Zero: r = 1 - p when 0 < p < 1, else 0.
    est = Learnability(_Options())
    assert reward(est, [1.0, 0.0, 0.0, 0.0]) == 0.75
    assert reward(est, [1.0, 1.0, 1.0, 0.0]) == 0.25
    assert reward(est, [1.0, 1.0]) == 0.0
    assert reward(est, [0.0, 0.0]) == 0.0
