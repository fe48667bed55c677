"""The reference's formulas, held to numbers derived by hand from docs/reference.md.

A recorded window (three environments, two skills, four iterations, known rewards and
log-probabilities) goes through the real estimators, advantage code and TIS weights; every
expected number below is written out from the spec's formulas, not computed by the code under
test.
"""

from __future__ import annotations

import math

import pytest

from spade_core.config.schema import LoopSection
from spade_core.interfaces import EnvIteration, EstimateInput
from spade_core.records import EnvProgram
from spade_core.selfplay.designer_reward import env_reward_scale

from plugins.difficulty_estimators import (Blend, BlendOptions, LearningProgress,
                                           LearningProgressOptions, LearningProgressPerStep,
                                           LearningProgressPerStepOptions, Regret, RegretOptions)
from plugins.trainers.grpo_rows import EncodedSample, compute_advantages, tis_weights

ENV = EnvProgram(source="class XEnv: pass", family="fake")

#: env -> per iteration of the window: (hinted rewards, unhinted rewards); hinted plays happen at
#: the window's start only.
WINDOW = {
    "a1": [([1, 1, 0, 1], [0, 0, 1, 0]), ([], [0, 1, 1, 0]), ([], [1, 1, 0, 1]),
           ([], [1, 1, 1, 0])],
    "a2": [([0, 0, 0, 0], [0, 0, 0, 0]), ([], [0, 0, 0, 1]), ([], [0, 0, 1, 1]),
           ([], [1, 1, 1, 0])],
    "b1": [([1, 1, 1, 1], [1, 1, 1, 1]), ([], [1, 1, 1, 1]), ([], [1, 1, 1, 1]),
           ([], [1, 1, 1, 1])],
}
SKILL = {"a1": "A", "a2": "A", "b1": "B"}


def _window_input(env: str) -> EstimateInput:
    plays = [EnvIteration(iteration=10 + i, hinted=list(h), unhinted=list(u))
             for i, (h, u) in enumerate(WINDOW[env])]
    return EstimateInput(env=ENV, hinted=plays[0].hinted, unhinted=plays[0].unhinted,
                         iteration=13, window=plays)


def test_blend_over_a_window():
    blend = Blend(BlendOptions())
    # a1: regret 0.75 - 0.25 = 0.5 -> clip(0.5 / 0.15) = 1; win rate = mean raw reward of all 16
    # unhinted plays = 9/16 = 0.5625, inside [0.4, 0.6] -> plateau 1; 0.4 * 1 + 0.6 * 1 = 1.0.
    assert blend.estimate(_window_input("a1")).designer_reward == pytest.approx(1.0)
    # a2: regret 0 -> 0; win rate 6/16 = 0.375 -> plateau 1 - (0.4 - 0.375) / 0.25 = 0.9;
    # 0.6 * 0.9 = 0.54.
    assert blend.estimate(_window_input("a2")).designer_reward == pytest.approx(0.54)
    # b1: regret 0; win rate 1.0 -> 1 - (1.0 - 0.6) / 0.25 < 0 -> plateau 0; reward 0.
    assert blend.estimate(_window_input("b1")).designer_reward == pytest.approx(0.0)
    # Without the window (an immediate estimate) a1's win rate is the first iteration's 0.25:
    # plateau 1 - 0.15 / 0.25 = 0.4 -> 0.4 + 0.6 * 0.4 = 0.64.
    first = _window_input("a1")
    immediate = EstimateInput(env=ENV, hinted=first.hinted, unhinted=first.unhinted)
    assert blend.estimate(immediate).designer_reward == pytest.approx(0.64)


def test_regret_and_micro_progress_over_a_window():
    # The reference's delayed regret: max(0, r_hint - mean of every unhinted play of the window)
    # = 0.75 - 9/16 = 0.1875.
    regret = Regret(RegretOptions()).estimate(_window_input("a1"))
    assert regret.designer_reward == pytest.approx(0.1875)
    # Blend's micro-LP (the reference's default "slope"): slope of the per-iteration means
    # 0.25, 0.5, 0.75, 0.75 (equal weights) over x = 0..3 is 0.175 per iteration; times
    # (4 - 1) = 0.525.
    blend = Blend(BlendOptions(micro_lp_weight=1.0, regret_weight=0.0, plateau_weight=0.0))
    assert blend.estimate(_window_input("a1")).figures["micro_lp"] == \
        pytest.approx(0.525)
    # The reference's micro_lp variant: late half (iterations 2-3: 6 wins of 8) minus early half
    # (iterations 0-1: 3 of 8) = 0.75 - 0.375 = 0.375; the slope is an option.
    per_step = LearningProgressPerStep(LearningProgressPerStepOptions(recent_plays=8))
    assert per_step.estimate(_window_input("a1")).designer_reward == pytest.approx(0.375)
    sloped = LearningProgressPerStep(LearningProgressPerStepOptions(recent_plays=8,
                                                                    progress="slope"))
    assert sloped.estimate(_window_input("a1")).designer_reward == pytest.approx(0.525)


def test_regret_timeout_penalty_and_solver_variance():
    first = _window_input("a1")
    timed_out = EstimateInput(env=ENV, hinted=first.hinted, unhinted=first.unhinted,
                              window=first.window, step_timeouts=1)
    # The reference's regret variant: -0.5 when the environment's step timed out.
    assert Regret(RegretOptions()).estimate(timed_out).designer_reward == -0.5
    assert Regret(RegretOptions(timeout_penalty=None)).estimate(
        timed_out).designer_reward == pytest.approx(0.1875)
    # Solver variance of the first iteration's [0, 0, 1, 0]: mean 0.25, population variance
    # 0.1875; exp(-(0.1875 - 0.25)^2 / 0.02) = exp(-0.1953125) = 0.8225775. With no earlier play
    # learning potential is its cold start: max(regret, 0) = 0.5, so 0.5 + 0.8225775.
    immediate = EstimateInput(env=ENV, hinted=first.hinted, unhinted=first.unhinted)
    progress = LearningProgress(LearningProgressOptions(solver_variance=True,
                                                        baseline="environment"))
    assert progress.estimate(immediate).designer_reward == \
        pytest.approx(1.3225775, abs=1e-6)


def _row(role: str, reward: float, group: str, skill: str = "", scale: float = 1.0
         ) -> EncodedSample:
    return EncodedSample(role=role, group=group, reward=reward, prompt_ids=[1],
                         completion_ids=[2], env_mask=[1], skill=skill, advantage_scale=scale)


def test_designer_advantages_centred_per_skill_and_scaled():
    # env_reward_scale: 12 agent samples per iteration (3 envs x 4 plays) / 3 designs x an
    # interval of 4 = 16 (under the cap of 50); 12 / 1 x 8 = 96 is capped at 50.
    loop = LoopSection()
    assert env_reward_scale(loop, 12, 3, 4) == 16.0
    assert env_reward_scale(loop, 12, 1, 8) == 50.0
    assert env_reward_scale(loop, 0, 3, 4) == 1.0
    rows = [_row("designer", 1.0, "a1", "A", 16.0), _row("designer", 0.54, "a2", "A", 16.0),
            _row("designer", 0.0, "b1", "B", 16.0)]
    compute_advantages(rows, {"designer": "skill"}, {"designer": "none"})
    # Skill A: mean 0.77 -> +0.23 and -0.23, times 16 = +3.68 / -3.68; skill B has one design:
    # 0 (no gradient), as the reference.
    assert [r.advantage for r in rows] == pytest.approx([3.68, -3.68, 0.0])


def test_agent_advantages_are_per_group_z_scores():
    rows = [_row("agent", r, "a1") for r in (0, 0, 1, 0)] + \
           [_row("agent", 1.0, "b1") for _ in range(4)]
    compute_advantages(rows, {"agent": "group"}, {"agent": "group"})
    # a1: mean 0.25, population std sqrt(0.25 * 0.75) = 0.4330127; (0 - 0.25) / 0.4330127 =
    # -0.5773503, (1 - 0.25) / 0.4330127 = 1.7320508. b1: all equal -> 0.
    expected = [-0.5773503, -0.5773503, 1.7320508, -0.5773503, 0.0, 0.0, 0.0, 0.0]
    assert [r.advantage for r in rows] == pytest.approx(expected, abs=1e-6)


def test_tis_weights_are_clamped_ratios():
    train = [-1.0, -2.0, -0.5, -0.2, -3.0]
    rollout = [-1.5, -1.0, -0.5, -1.2, 0.0]
    # exp(0.5) = 1.6487213, exp(-1) = 0.3678794, exp(0) = 1, exp(1) = 2.718 -> 2 (clamp),
    # exp(-3) = 0.0497871.
    assert tis_weights(train, rollout) == pytest.approx(
        [1.6487213, 0.3678794, 1.0, 2.0, 0.0497871], abs=1e-6)
    assert tis_weights([0.0], [-100.0]) == [2.0]  # no overflow
    assert math.isclose(tis_weights([0.0], [0.0], 0.0, 2.0)[0], 1.0)
    with pytest.raises(ValueError, match="2 training log-probs for 1 rollout"):
        tis_weights([0.0, 0.0], [0.0])


# -- a recorded window through the loop's own window machinery ---------------------------------

#: Per environment: (skill, hinted rewards at the window's start, and per iteration 8..11 the
#: unhinted plays: a number is a reward, "error" a play whose environment raised, "timeout" one
#: whose environment's own call timed out). a0 is an earlier window's (iterations 4 and 5).
SCRIPT = {
    "a0": ("A", [1, 1, 1, 1], {4: [0, 0, 0, 0], 5: [0, 0, 1, 0]}),
    "a1": ("A", [1, 1, 0, 1], {8: [0, 0, 1, 0, "error"], 9: [0, 1, 1], 10: [1, 1, 0, 1, 1],
                               11: [1, 1, 1, 0]}),
    "a2": ("A", [0, 0, 0, 0], {8: [1, 1, 1, 1], 9: [1, 1, 1, 1], 10: [1, 1, 0, 1],
                               11: [1, 1, 1, 1]}),
    "b1": ("B", [1, 1, 1, 1], {8: [1, 0, 1, 1], 9: [1, 1, 0, 1], 10: [1, "timeout"],
                               11: [1, 1, 1, 1]}),
    "b2": ("B", [1, 1, 1, 1], {8: [0, 0, 0, "timeout"], 9: [0, 0, 0, 0], 10: [0, 0, 0, 0],
                               11: [0, 0, 0, 0]}),
}


def _episodes(name: str, plays: list, hinted: bool) -> list:
    from spade_core.records import Episode

    return [Episode(env_id=name, seed=k, hinted=hinted, first_observation="",
                    reward=0.0 if isinstance(r, str) else float(r),
                    error=r if isinstance(r, str) else None, timed_out=r == "timeout")
            for k, r in enumerate(plays)]


def _play_window(timeouts: str):
    """Iterations 4-5 (a0's window) and 8-11 (a1, a2, b1, b2) through the loop's own steps:
    fresh proposals at a window's start, ``window_replays`` after it, the failed-play rule of
    ``play``, ``estimate`` recording every iteration in the real (in-process) memory; then the
    window's designs released at the next window's start. Returns the memory, what was played
    per iteration, and the window."""
    from envmemory.nomemory import NoMemory
    from spade_core.records import DesignTarget, Document, EnvStatus, Verdict
    from spade_core.selfplay.designer_reward import reward
    from spade_core.selfplay.environments import window_replays
    from spade_core.selfplay.estimate import estimate
    from spade_core.selfplay.play import _drop_failed
    from spade_core.selfplay.proposal import Proposal
    from spade_core.selfplay.remember import remember
    from spade_core.selfplay.setup import Components
    from spade_core.selfplay.window import HeldDesign, Window

    from fakes.selfplay import FakeFamily

    family = FakeFamily()
    memory = NoMemory()
    c = Components(corpus=None, designer=None, families=[family], sandbox=None,
                   estimator=Regret(RegretOptions()), memory=memory, backend=None, trainer=None)
    loop = LoopSection(timeouts=timeouts, rollouts_per_env=4, hint_plays_per_env=4)
    source = {name: f"class Env_{name}: pass" for name in SCRIPT}
    ids = {name: EnvProgram(source=source[name], family=family.name).id for name in SCRIPT}
    name_of = {v: k for k, v in ids.items()}
    played: dict[int, set[str]] = {}
    for start, names in ((4, ["a0"]), (8, ["a1", "a2", "b1", "b2"])):
        for iteration in range(start, start + 4):
            if iteration == start:
                proposals = [Proposal(index=i, family=family, document=Document(id=n, text=""),
                                      prompt=[], program=source[n], status=EnvStatus.FRONTIER,
                                      verdict=Verdict(valid=True, category="ok", message=""),
                                      target=DesignTarget(skill=SCRIPT[n][0]))
                             for i, n in enumerate(names)]
            else:
                proposals = window_replays(c, [ids[n] for n in names], start,
                                           drop_timed_out=timeouts == "start")
            for p in proposals:
                name = name_of[p.env_id]
                unhinted = SCRIPT[name][2].get(iteration, [])
                p.unhinted = _episodes(name, unhinted, hinted=False)
                p.hinted = _episodes(name, SCRIPT[name][1], True) if iteration == start else []
                p.conversations = [[] for _ in p.unhinted + p.hinted]
                _drop_failed(p)
            proposals = [p for p in proposals if p.unhinted or p.failed]
            played[iteration] = {name_of[p.env_id] for p in proposals}
            estimate(c, loop, proposals, iteration)
            reward(loop, proposals)
            remember(c, proposals, iteration)
    window = Window(start=8, env_ids=[ids[n] for n in ("a1", "a2", "b1", "b2")],
                    designs=[HeldDesign(env_id=ids[n], family_name=family.name,
                                        skill=SCRIPT[n][0],
                                        messages=[{"role": "assistant", "content": n}])
                             for n in ("a1", "a2", "b1", "b2")])
    return memory, played, window, name_of


def _weighted_slope_by_hand(ys: list[float], ns: list[int]) -> float:
    """np.polyfit(x, y, 1, w=sqrt(n))'s slope: weighted least squares with weight n on each
    squared residual, x = 0, 1, ...: sum n (x - x̄)(y - ȳ) / sum n (x - x̄)^2."""
    xs = list(range(len(ys)))
    total = sum(ns)
    x_bar = sum(n * x for n, x in zip(ns, xs)) / total
    y_bar = sum(n * y for n, y in zip(ns, ys)) / total
    return (sum(n * (x - x_bar) * (y - y_bar) for n, x, y in zip(ns, xs, ys))
            / sum(n * (x - x_bar) ** 2 for n, x in zip(ns, xs)))


def test_a_recorded_window_through_the_window_machinery():
    from spade_core.selfplay.designer_reward import release

    memory, played, window, name_of = _play_window("start")
    # b2 timed out in the window's first iteration, b1 at iteration 10: neither is played again
    # in the window (the reference blacklists a hung game); the failed plays are dropped.
    assert played[9] == {"a1", "a2", "b1"} and played[10] == {"a1", "a2", "b1"}
    assert played[11] == {"a1", "a2"}
    a1 = memory.get(window.designs[0].env_id)
    assert [len(h.unhinted) for h in a1.history] == [4, 3, 5, 4]  # the raised play left out

    # Blend with the regret floor off and a micro-LP term: the reference's formulas by hand.
    blend = Blend(BlendOptions(regret_floor=False, micro_lp_weight=0.5))
    samples, delayed = release(blend, memory, window, 1.0, interval=4)
    reward = {name_of[d.env_id]: d.designer_reward for d in delayed}
    # a1: regret = mean hint (3/4) - mean of the first iteration's counted plays (1/4) = 0.5,
    # unfloored 0.5 / 0.15; win rate = 10 wins / 16 counted plays = 0.625 -> plateau
    # 1 - 0.025 / 0.25 = 0.9; micro-LP = WLS slope of (1/4, 2/3, 4/5, 3/4) weighted by plays
    # (4, 3, 5, 4) in the squared loss, times 3.
    micro = _weighted_slope_by_hand([1 / 4, 2 / 3, 4 / 5, 3 / 4], [4, 3, 5, 4]) * 3
    assert micro != pytest.approx(  # the square-root weighting would give another number
        _weighted_slope_by_hand([1 / 4, 2 / 3, 4 / 5, 3 / 4], [2, 3 ** 0.5, 5 ** 0.5, 2]) * 3)
    assert reward["a1"] == pytest.approx(0.4 * 0.5 / 0.15 + 0.6 * 0.9 + 0.5 * micro / 0.10)
    # a2: regret 0 - 1 = -1 -> 0.4 * (-1 / 0.15); win rate 15/16 -> plateau 0; micro-LP of
    # (1, 1, 3/4, 1), 4 plays each. Negative: masked, not trained.
    micro2 = _weighted_slope_by_hand([1, 1, 3 / 4, 1], [4, 4, 4, 4]) * 3
    assert reward["a2"] == pytest.approx(0.4 * -1 / 0.15 + 0.5 * micro2 / 0.10)
    assert reward["a2"] < 0
    # b1: regret 1 - 3/4; win rate 7 of 9 counted plays (iteration 10's timeout dropped, 11 not
    # played) -> plateau 1 - (7/9 - 0.6) / 0.25; micro-LP of (3/4, 3/4, 1) with plays (4, 4, 1).
    micro3 = _weighted_slope_by_hand([3 / 4, 3 / 4, 1], [4, 4, 1]) * 2
    assert reward["b1"] == pytest.approx(
        0.4 * 0.25 / 0.15 + 0.6 * (1 - (7 / 9 - 0.6) / 0.25) + 0.5 * micro3 / 0.10)
    trained = {name_of[s.group] for s in samples}
    assert trained == {"a1", "b1", "b2"}
    assert [d.trained for d in delayed] == [True, False, True, True]
    # env_reward_scale counts the window's four designs, the masked a2 included, as the
    # reference counts them before dropping it: 16 agent samples / 4 designs x 4 = 16, not 21.3.
    from spade_core.interfaces import TrainingSample
    from spade_core.records import Role
    from spade_core.selfplay.designer_reward import scale_designer

    agents = [TrainingSample(role=Role.AGENT, messages=[], reward=0.0, group="g")] * 16
    scaled = scale_designer(LoopSection(), samples + agents, 4,
                            masked=sum(not d.trained for d in delayed))
    assert {s.meta["advantage_scale"] for s in scaled if s.role == Role.DESIGNER} == {16.0}
    # The delayed reward sits beside the immediate one in the memory's history.
    entry = memory.get(window.designs[1].env_id).history[0]
    assert entry.figures["delayed_designer_reward"] == pytest.approx(reward["a2"])
    assert entry.figures["delayed_trained"] == 0.0
    assert entry.designer_reward == pytest.approx(0.0)  # the immediate regret, floored

    # Regret: the reference's -0.5 only for a timeout at the regeneration step (b2); b1's later
    # timeout is no penalty: max(0, 1 - 7/9).
    regret = {name_of[s.group]: s.reward
              for s in release(Regret(RegretOptions()), memory, window, 1.0, interval=4)[0]}
    assert regret["b2"] == -0.5 and regret["b1"] == pytest.approx(2 / 9)
    assert regret["a1"] == pytest.approx(0.75 - 10 / 16)

    # Learning potential over the whole window, per skill (gammas 0.98 / 0.85): skill A's means
    # per window are 1/8 (a0's 8 plays) and 25/32 (a1 and a2: 25 wins of 32 counted plays), so
    # mu_slow = 0.15 * 1/8 + 0.85 * 25/32; skill B's only window mean is 7/12 (b1's 7 of 9 and
    # b2's 0 of 3). Reward = |the game's window mean - its skill's mu_slow|.
    lp = LearningProgress(LearningProgressOptions(baseline_gamma=0.85, fast_gamma=0.98))
    lp_reward = {name_of[s.group]: s.reward for s in release(lp, memory, window, 1.0,
                                                            interval=4)[0]}
    slow_a = 0.15 * (1 / 8) + 0.85 * (25 / 32)
    assert lp_reward["a1"] == pytest.approx(abs(10 / 16 - slow_a))
    assert lp_reward["a2"] == pytest.approx(abs(15 / 16 - slow_a))
    assert lp_reward["b1"] == pytest.approx(abs(7 / 9 - 7 / 12))
    assert lp_reward["b2"] == pytest.approx(7 / 12)


def test_timeouts_anywhere_in_the_window_as_an_option():
    from spade_core.selfplay.designer_reward import release

    memory, played, window, name_of = _play_window("window")
    assert played[11] == {"a1", "a2", "b1", "b2"}  # timed-out games keep being played
    regret = {name_of[s.group]: s.reward for s in release(
        Regret(RegretOptions()), memory, window, 1.0, timeouts="window", interval=4)[0]}
    assert regret["b1"] == -0.5 and regret["b2"] == -0.5
