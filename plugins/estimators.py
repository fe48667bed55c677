"""Built-in difficulty estimators: ``regret``, ``blend``, ``learnability``, ``solve-rate``, and
the history-aware ``learning-progress``, ``learning-progress-per-step`` and ``frontier``.

Episode rewards are in [-1, 1]; an episode counts as a win when its reward is at least the run's
``loop.success_threshold`` (1.0 by default: full success). The formulas follow the SPADE reference
implementation (regret, blend, plateau, learning potential, micro learning progress, frontier) and
Absolute Zero (learnability); see ``docs/estimators.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from spade_core.components import BuildContext
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import DifficultyEstimator, EnvIteration, EstimateInput
from spade_core.records import Difficulty


def _mean(values: Sequence[float]) -> float:
    return fmean(values) if values else 0.0


def _win_rate(values: Sequence[float], threshold: float) -> float:
    return sum(1 for v in values if v >= threshold) / len(values) if values else 0.0


def plateau(p: float, low: float = 0.4, high: float = 0.6, ramp: float = 0.25) -> float:
    """1 on [low, high], falling linearly to 0 over ``ramp`` on each side."""
    if low <= p <= high:
        return 1.0
    distance = low - p if p < low else p - high
    return max(0.0, 1.0 - distance / ramp) if ramp > 0 else 0.0


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _figures(hinted: Sequence[float], unhinted: Sequence[float], threshold: float) -> dict:
    return {
        "hinted_mean": _mean(hinted),
        "unhinted_mean": _mean(unhinted),
        "regret": _mean(hinted) - _mean(unhinted),
        "win_rate": _win_rate(unhinted, threshold),
        "hinted_win_rate": _win_rate(hinted, threshold),
    }


class RegretOptions(_Options):
    floor_negative: bool = Field(default=True,
                                 description="designer reward max(regret, 0) instead of regret")
    timeout_penalty: float | None = Field(
        default=-0.5, description="designer reward when one of the environment's own calls "
        "timed out in an episode (the reference's STEP_TIMEOUT_PENALTY); null: no penalty")


class _Estimator(DifficultyEstimator):
    """Options plus the run's success threshold (the win test of every built-in estimator)."""

    def __init__(self, options: BaseModel, success_threshold: float = 1.0) -> None:
        self.options = options
        self.threshold = success_threshold


class Regret(_Estimator):
    """Designer reward = mean hinted reward - mean unhinted reward (floored at 0 by default);
    ``timeout_penalty`` when the environment's own calls ran out of time (the reference)."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.pooled_unhinted, self.threshold)
        reward = figures["regret"]
        if self.options.floor_negative:
            reward = max(reward, 0.0)
        penalty = self.options.timeout_penalty
        if penalty is not None and data.step_timeouts:
            reward = penalty
        return Difficulty(figures=figures, designer_reward=reward, regret=figures["regret"])


class BlendOptions(_Options):
    regret_weight: float = Field(default=0.4, ge=0.0)
    plateau_weight: float = Field(default=0.6, ge=0.0)
    regret_saturation: float = Field(default=0.15, gt=0.0,
                                     description="regret at which the regret term reaches 1")
    plateau_low: float = Field(default=0.4, ge=0.0, le=1.0)
    plateau_high: float = Field(default=0.6, ge=0.0, le=1.0)
    plateau_ramp: float = Field(default=0.25, ge=0.0)
    win_rate: Literal["mean_reward", "success"] = Field(
        default="mean_reward", description="what the plateau reads: the mean unhinted reward "
        "(the reference) or the share of unhinted episodes at the success threshold")
    micro_lp_weight: float = Field(default=0.0, ge=0.0, description="weight of the window's "
                                   "learning progress (slope of per-iteration mean reward times "
                                   "iterations - 1, over micro_lp_scale); 0 in the recipes")
    micro_lp_scale: float = Field(default=0.10, gt=0.0)
    frontier_weight: float = Field(default=0.0, ge=0.0, description="weight of the penalty "
                                   "(w - 0.5)^2 / frontier_scale on the win rate; 0 in the recipes")
    frontier_scale: float = Field(default=0.08, gt=0.0)


class Blend(_Estimator):
    """The reference's shipped default: w_r * clip(regret / s, 0, 1) + w_p * plateau(win rate)
    (+ w_lp * micro-LP / s_lp - w_f * (w - 0.5)^2 / s_f, weights 0 by default). Over a window the
    regret compares the hinted plays with the unhinted ones played alongside them, and the win
    rate pools every unhinted play of the window, as the reference's delayed blend."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        o = self.options
        figures = _figures(data.hinted, data.unhinted, self.threshold)
        pooled = data.pooled_unhinted
        win = _mean(pooled) if o.win_rate == "mean_reward" else _win_rate(pooled, self.threshold)
        regret_term = min(max(figures["regret"] / o.regret_saturation, 0.0), 1.0)
        plateau_term = plateau(win, o.plateau_low, o.plateau_high, o.plateau_ramp)
        reward = o.regret_weight * regret_term + o.plateau_weight * plateau_term
        micro_lp = _window_progress(data.window) if o.micro_lp_weight else 0.0
        reward += o.micro_lp_weight * micro_lp / o.micro_lp_scale
        reward -= o.frontier_weight * (win - 0.5) ** 2 / o.frontier_scale
        figures |= {"regret_term": regret_term, "plateau_term": plateau_term,
                    "plateau_win_rate": win, "micro_lp": micro_lp}
        if data.window:
            figures["window_episodes"] = float(len(pooled))
        return Difficulty(figures=figures, regret=figures["regret"], designer_reward=reward)


def _window_progress(window: Sequence[EnvIteration]) -> float:
    """The reference's micro learning progress over a window: the slope of the per-iteration
    mean reward (weighted by the square root of its plays) times the iterations spanned - 1;
    0 with fewer than two played iterations."""
    plays = [h for h in window if h.unhinted]
    slope = _weighted_slope([float(i) for i in range(len(plays))],
                            [fmean(h.unhinted) for h in plays],
                            [len(h.unhinted) ** 0.5 for h in plays])
    return 0.0 if slope is None else slope * (len(plays) - 1)


class Learnability(_Estimator):
    """Absolute Zero's learnability: 1 - p when 0 < p < 1 (p = unhinted win rate), else 0."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.pooled_unhinted, self.threshold)
        p = figures["win_rate"]
        return Difficulty(figures=figures, regret=figures["regret"],
                          designer_reward=(1.0 - p) if 0.0 < p < 1.0 else 0.0)


class SolveRateOptions(_Options):
    plateau_low: float = Field(default=0.4, ge=0.0, le=1.0)
    plateau_high: float = Field(default=0.6, ge=0.0, le=1.0)
    plateau_ramp: float = Field(default=0.25, ge=0.0)
    win_rate: Literal["mean_reward", "success"] = Field(
        default="mean_reward", description="what the plateau reads: the mean unhinted reward "
        "(the reference's solve_rate, blend with plateau weight 1) or the success share")


class SolveRate(_Estimator):
    """Plateau of the unhinted win rate only: rewards environments solved about half the time."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        o = self.options
        figures = _figures(data.hinted, data.pooled_unhinted, self.threshold)
        win = _mean(data.pooled_unhinted) if o.win_rate == "mean_reward" else figures["win_rate"]
        return Difficulty(figures=figures, regret=figures["regret"], designer_reward=plateau(
            win, o.plateau_low, o.plateau_high, o.plateau_ramp))


class ColdStartOptions(_Options):
    cold_start: Literal["regret", "zero"] = Field(
        default="regret", description="designer reward while no progress can be measured yet "
        "(an environment's first play): max(regret, 0), or 0")


class LearningProgressOptions(ColdStartOptions):
    baseline_gamma: float = Field(
        default=0.95, gt=0.0, le=1.0, description="weight of each newer iteration in the slow "
        "moving average of the mean unhinted reward (the reference's gamma_slow)")
    solver_variance: bool = Field(
        default=False, description="add the reference's solver-variance reward "
        "exp(-(var - 0.25)^2 / 0.02), var = the population variance of the unhinted rewards")


class LearningProgressPerStepOptions(ColdStartOptions):
    window: int = Field(default=8, ge=2, description="latest plays fitted, this one included")
    signed: bool = Field(default=False,
                         description="reward the fitted change itself, not max(change, 0)")


class FrontierOptions(_Options):
    window: int = Field(default=8, ge=1, description="latest plays pooled, this one included")


class _ProgressEstimator(_Estimator):
    """A learning-progress estimator: it needs earlier plays to measure a change, and its
    ``cold_start`` option says what the designer gets until there are enough."""

    def _cold(self, figures: dict) -> float:
        """The designer reward while no progress is measurable (``cold_start`` option)."""
        return max(figures["regret"], 0.0) if self.options.cold_start == "regret" else 0.0


def solver_variance_reward(rewards: Sequence[float]) -> float:
    """The reference's ``compute_variance_reward``: exp(-(var - 0.25)^2 / (2 * 0.01)), var the
    population variance of the rewards: 1 when a binary outcome is a coin flip."""
    mean = fmean(rewards)
    variance = fmean([(r - mean) ** 2 for r in rewards])
    return math.exp(-((variance - 0.25) ** 2) / (2 * 0.01))


def _plays(data: EstimateInput) -> list[EnvIteration]:
    """The earlier iterations that were played (unhinted rewards recorded), then this one."""
    current = EnvIteration(data.iteration, list(data.hinted), list(data.unhinted))
    return [h for h in data.history if h.unhinted] + [current]


class LearningProgress(_ProgressEstimator):
    """The reference's learning potential: |mean unhinted reward now - its slow moving average
    over the earlier iterations|; progress (or forgetting) measured against the recent past."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.unhinted, self.threshold)
        now = figures["unhinted_mean"]
        earlier = [fmean(h.unhinted) for h in data.history if h.unhinted]
        if data.window:  # within the window: its last iteration against the ones before
            played = [h for h in data.window if h.unhinted]
            now = fmean(played[-1].unhinted) if played else now
            earlier = [fmean(h.unhinted) for h in played[:-1]]
        if not earlier:
            figures |= {"baseline": now, "progress": 0.0, "cold_start": 1.0}
            return Difficulty(figures=figures, regret=figures["regret"],
                              designer_reward=self._cold(figures) + self._variance(data, figures))
        gamma = self.options.baseline_gamma
        baseline = earlier[0]
        for mean in earlier[1:]:
            baseline = (1.0 - gamma) * baseline + gamma * mean
        figures |= {"baseline": baseline, "progress": now - baseline, "cold_start": 0.0}
        return Difficulty(figures=figures, regret=figures["regret"],
                          designer_reward=abs(now - baseline) + self._variance(data, figures))

    def _variance(self, data: EstimateInput, figures: dict) -> float:
        """The solver-variance reward (0 unless ``solver_variance``; needs two plays)."""
        rewards = data.pooled_unhinted
        if not self.options.solver_variance or len(rewards) < 2:
            return 0.0
        reward = solver_variance_reward(rewards)
        figures["solver_variance_reward"] = reward
        return reward


class LearningProgressPerStep(_ProgressEstimator):
    """The reference's micro learning progress: the change in mean unhinted reward over the latest
    plays, from a least-squares line through the per-iteration means (weighted by episodes)."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.unhinted, self.threshold)
        plays = [p for p in (data.window or _plays(data)) if p.unhinted][-self.options.window:]
        slope = _weighted_slope([float(p.iteration) for p in plays],
                                [fmean(p.unhinted) for p in plays],
                                [float(len(p.unhinted)) for p in plays])
        if slope is None:
            figures |= {"progress": 0.0, "progress_per_iteration": 0.0,
                        "window_plays": float(len(plays)), "cold_start": 1.0}
            return Difficulty(figures=figures, regret=figures["regret"],
                              designer_reward=self._cold(figures))
        change = slope * (plays[-1].iteration - plays[0].iteration)
        figures |= {"progress": change, "progress_per_iteration": slope,
                    "window_plays": float(len(plays)), "cold_start": 0.0}
        return Difficulty(figures=figures, regret=figures["regret"],
                          designer_reward=change if self.options.signed else max(change, 0.0))


def _weighted_slope(xs: Sequence[float], ys: Sequence[float],
                    weights: Sequence[float]) -> float | None:
    """Slope of the weighted least-squares line through the points; ``None`` when the points do
    not span two distinct x values (no line to fit)."""
    total = sum(weights)
    if total <= 0:
        return None
    x_mean = sum(w * x for w, x in zip(weights, xs, strict=True)) / total
    y_mean = sum(w * y for w, y in zip(weights, ys, strict=True)) / total
    spread = sum(w * (x - x_mean) ** 2 for w, x in zip(weights, xs, strict=True))
    if spread <= 0:
        return None
    return sum(w * (x - x_mean) * (y - y_mean)
               for w, x, y in zip(weights, xs, ys, strict=True)) / spread


class Frontier(_Estimator):
    """4 p (1 - p), p = unhinted win rate pooled over the latest plays: 1 at p = 0.5, 0 when the
    environment is always or never solved (the reference's frontier term, (p - 0.5)^2, turned
    into a reward in [0, 1])."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.unhinted, self.threshold)
        rewards = [r for p in (data.window or _plays(data))[-self.options.window:]
                   for r in p.unhinted]
        p = _win_rate(rewards, self.threshold)
        figures |= {"window_win_rate": p, "window_episodes": float(len(rewards))}
        return Difficulty(figures=figures, regret=figures["regret"],
                          designer_reward=4.0 * p * (1.0 - p))


def _factory(cls: type[_Estimator]):  # noqa: ANN202 - a component factory
    def build(options: BaseModel, context: BuildContext) -> _Estimator:
        return cls(options, context.success_threshold)

    return build


@hookimpl
def register_difficulty_estimators(register):
    register("regret", _factory(Regret), RegretOptions,
             "mean hinted reward minus mean unhinted reward")
    register("blend", _factory(Blend), BlendOptions,
             "0.4 * saturating regret + 0.6 * win-rate plateau (SPADE's shipped default)")
    register("learnability", _factory(Learnability), _Options,
             "Absolute Zero: 1 - p for 0 < p < 1, else 0")
    register("solve-rate", _factory(SolveRate), SolveRateOptions,
             "win-rate plateau only")
    register("learning-progress", _factory(LearningProgress), LearningProgressOptions,
             "|mean unhinted reward - its slow average over earlier iterations| (SPADE)")
    register("learning-progress-per-step", _factory(LearningProgressPerStep),
             LearningProgressPerStepOptions,
             "fitted change of mean unhinted reward over the latest plays (SPADE micro-LP)")
    register("frontier", _factory(Frontier), FrontierOptions,
             "4 p (1 - p), p = unhinted win rate over the latest plays")
    register("alpha-curriculum", _factory(AlphaCurriculum), AlphaCurriculumOptions,
             "GenEnv: exp(-beta (p - alpha)^2), highest at success rate alpha")


# -- The field's curriculum signals (issue 36) ---------------------------------------------------


class AlphaCurriculumOptions(_Options):
    alpha: float = Field(default=0.5, ge=0.0, le=1.0,
                         description="target success rate (GenEnv's alpha)")
    beta: float = Field(default=2.0, gt=0.0, description="sharpness of the reward around alpha "
                        "(GenEnv's beta; their released config uses 2.0)")


class AlphaCurriculum(_Estimator):
    """GenEnv's alpha-curriculum reward (arXiv 2512.19682): exp(-beta * (p - alpha)^2), p = the
    agent's unhinted success rate on the environment (pooled over a window): highest when the
    agent succeeds about alpha of the time."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        o = self.options
        figures = _figures(data.hinted, data.pooled_unhinted, self.threshold)
        p = figures["win_rate"]
        return Difficulty(figures=figures, regret=figures["regret"],
                          designer_reward=math.exp(-o.beta * (p - o.alpha) ** 2))
