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

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
        return Difficulty(figures=figures, designer_reward=reward)


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
                                   "learning progress (micro_lp_estimator, over "
                                   "micro_lp_scale); 0 in the recipes")
    micro_lp_scale: float = Field(default=0.10, gt=0.0)
    micro_lp_estimator: Literal["slope", "difference"] = Field(
        default="slope", description="the reference's --spade-micro-lp-estimator: 'slope' "
        "(weighted least-squares slope of the per-iteration mean reward, each iteration weighted "
        "by its plays in the squared loss, times iterations - 1) or 'difference' (mean of the "
        "late half's plays - mean of the early half's: its 'twobucket')")
    micro_lp_signed: bool = Field(default=True, description="keep a negative micro-LP (the "
                                  "reference's default); false: max(micro-LP, 0)")
    regret_floor: bool = Field(default=True, description="clip the regret term to [0, 1] (the "
                               "reference's --spade-regret-floor, set in every recipe); false: "
                               "regret / regret_saturation unclipped, negative included")
    mask_negative: bool = Field(default=True, description="a design whose blend is negative is "
                                "not trained (train false, figure masked = 1; the reference's "
                                "proposer_masked); false: trained with its negative reward")
    frontier_weight: float = Field(default=0.0, ge=0.0, description="weight of the penalty "
                                   "(w - 0.5)^2 / frontier_scale on the win rate; 0 in the recipes")
    frontier_scale: float = Field(default=0.08, gt=0.0)


class Blend(_Estimator):
    """The reference's shipped default: w_r * clip(regret / s, 0, 1) + w_p * plateau(win rate)
    (+ w_lp * micro-LP / s_lp - w_f * (w - 0.5)^2 / s_f, weights 0 by default). Over a window the
    regret compares the hinted plays with the unhinted ones of the window's first played
    iteration ("matched timing"), and the win rate pools every unhinted play of the window, as
    the reference's delayed blend. A negative blend is masked (``mask_negative``)."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        o = self.options
        played = [h for h in data.window if h.unhinted]
        matched = played[0].unhinted if played else data.unhinted
        figures = _figures(data.hinted, matched, self.threshold)
        pooled = data.pooled_unhinted
        win = _mean(pooled) if o.win_rate == "mean_reward" else _win_rate(pooled, self.threshold)
        regret_term = figures["regret"] / o.regret_saturation
        if o.regret_floor:
            regret_term = min(max(regret_term, 0.0), 1.0)
        plateau_term = plateau(win, o.plateau_low, o.plateau_high, o.plateau_ramp)
        reward = o.regret_weight * regret_term + o.plateau_weight * plateau_term
        micro_lp = (_window_progress(played, o.micro_lp_estimator)
                    if o.micro_lp_weight else 0.0)
        if not o.micro_lp_signed:
            micro_lp = max(micro_lp, 0.0)
        reward += o.micro_lp_weight * micro_lp / o.micro_lp_scale
        reward -= o.frontier_weight * (win - 0.5) ** 2 / o.frontier_scale
        figures |= {"regret_term": regret_term, "plateau_term": plateau_term,
                    "plateau_win_rate": win, "micro_lp": micro_lp}
        if data.window:  # the loop's regret pools the window; the regret term is matched
            figures |= {"matched_regret": figures["regret"],
                        "window_episodes": float(len(pooled))}
        return Difficulty(figures=figures, designer_reward=reward,
                          train=not (o.mask_negative and reward < 0))


def _window_progress(plays: Sequence[EnvIteration], estimator: str = "slope") -> float:
    """The reference's micro learning progress over a window's played iterations (0 with fewer
    than two). ``slope``: the least-squares slope of the per-iteration mean reward against the
    iteration's position, times the positions spanned (its fitted end minus start); the
    reference passes sqrt(plays) as ``np.polyfit``'s ``w``, which multiplies the residuals, so
    an iteration weighs its number of plays in the squared loss, as here. ``difference``: the
    mean of the late half's plays minus the early half's (:func:`early_late`)."""
    plays = [h for h in plays if h.unhinted]
    if len(plays) < 2:
        return 0.0
    if estimator == "difference":
        early, late = early_late(plays)
        return late - early
    slope = _weighted_slope([float(i) for i in range(len(plays))],
                            [fmean(h.unhinted) for h in plays],
                            [float(len(h.unhinted)) for h in plays])
    return 0.0 if slope is None else slope * (len(plays) - 1)


def early_late(plays: Sequence[EnvIteration]) -> tuple[float, float]:
    """The reference's ``_early_late_means``: every play of the first ``len // 2`` iterations
    pooled, then every play of the rest (an odd window's middle iteration is late)."""
    mid = len(plays) // 2
    early = [r for h in plays[:mid] for r in h.unhinted]
    late = [r for h in plays[mid:] for r in h.unhinted]
    return _mean(early), _mean(late)


class Learnability(_Estimator):
    """Absolute Zero's learnability: 1 - p when 0 < p < 1 (p = unhinted win rate), else 0."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.pooled_unhinted, self.threshold)
        p = figures["win_rate"]
        return Difficulty(figures=figures, designer_reward=(1.0 - p) if 0.0 < p < 1.0 else 0.0)


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
        return Difficulty(figures=figures, designer_reward=plateau(
            win, o.plateau_low, o.plateau_high, o.plateau_ramp))


class ColdStartOptions(_Options):
    cold_start: Literal["regret", "zero"] = Field(
        default="regret", description="designer reward while no progress can be measured yet "
        "(an environment's first play): max(regret, 0), or 0")


class LearningProgressOptions(ColdStartOptions):
    baseline: Literal["skill", "environment"] = Field(
        default="skill", description="'skill' (the reference): one pair of fast/slow moving "
        "averages per skill, updated with the skill's mean unhinted reward of each regeneration "
        "window (each iteration in the frontier schedule); the reward is |the environment's mean "
        "- its skill's slow average|. 'environment': the environment's last iteration against "
        "a slow average of its earlier ones (cold_start applies)")
    baseline_gamma: float = Field(
        default=0.95, gt=0.0, le=1.0, description="weight of each newer mean in the slow moving "
        "average (the reference's gamma_slow, --spade-gamma2: 0.95 by default, 0.85 in its "
        "scripts)")
    fast_gamma: float = Field(
        default=0.99, gt=0.0, le=1.0, description="weight of each newer mean in the fast moving "
        "average (the reference's gamma_fast, --spade-gamma1: 0.99 by default, 0.98 in its "
        "scripts); only the figures mu_fast and signed_lp read it")
    solver_variance: bool = Field(
        default=False, description="add the reference's solver-variance reward "
        "exp(-(var - 0.25)^2 / 0.02), var = the population variance of the unhinted rewards")

    @model_validator(mode="after")
    def _fast_above_slow(self) -> "LearningProgressOptions":
        if self.fast_gamma <= self.baseline_gamma:
            raise ValueError(f"fast_gamma ({self.fast_gamma}) must be above baseline_gamma "
                             f"({self.baseline_gamma}), as the reference requires")
        return self


class LearningProgressPerStepOptions(ColdStartOptions):
    recent_plays: int = Field(default=8, ge=2,
                              description="latest plays fitted, this one included")
    progress: Literal["difference", "slope"] = Field(
        default="difference", description="'difference' (the reference's micro_lp): mean of "
        "the late half's plays - mean of the early half's; 'slope': the fitted change of a "
        "least-squares line through the per-iteration means, weighted by plays")
    signed: bool = Field(default=False,
                         description="reward the change itself, not max(change, 0)")


class FrontierOptions(_Options):
    recent_plays: int = Field(default=8, ge=1,
                              description="latest plays pooled, this one included")


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


def moving_average(means: Sequence[float], gamma: float) -> float | None:
    """The reference's tracker: the first mean sets it, each later one moves it to
    (1 - gamma) * it + gamma * mean; ``None`` before any mean."""
    value = None
    for mean in means:
        value = mean if value is None else (1.0 - gamma) * value + gamma * mean
    return value


class LearningProgress(_ProgressEstimator):
    """The reference's learning potential. Per skill (default): |the environment's mean
    unhinted reward - its skill's slow moving average|, the averages updated with the skill's
    mean of each window (``EstimateInput.skill_means``): over a window the update comes first
    (the reference's delayed path), in an immediate estimate after (its per-rollout path, a
    baseline of 0 before the first). Per environment: its last iteration against a slow average
    of its earlier ones."""

    @property
    def uses_skill_means(self) -> bool:  # type: ignore[override]
        return self.options.baseline == "skill"

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.unhinted, self.threshold)
        if self.uses_skill_means:
            return self._per_skill(data, figures)
        now = figures["unhinted_mean"]
        earlier = [fmean(h.unhinted) for h in data.history if h.unhinted]
        if data.window:  # within the window: its last iteration against the ones before
            played = [h for h in data.window if h.unhinted]
            now = fmean(played[-1].unhinted) if played else now
            earlier = [fmean(h.unhinted) for h in played[:-1]]
        if not earlier:
            figures |= {"baseline": now, "progress": 0.0, "cold_start": 1.0}
            return Difficulty(figures=figures,
                              designer_reward=self._cold(figures) + self._variance(data, figures))
        gamma = self.options.baseline_gamma
        baseline = earlier[0]
        for mean in earlier[1:]:
            baseline = (1.0 - gamma) * baseline + gamma * mean
        figures |= {"baseline": baseline, "progress": now - baseline, "cold_start": 0.0}
        return Difficulty(figures=figures,
                          designer_reward=abs(now - baseline) + self._variance(data, figures))

    def _per_skill(self, data: EstimateInput, figures: dict) -> Difficulty:
        o = self.options
        # Over a window the trackers take the window's mean first; an immediate estimate reads
        # them before this iteration's mean (the last, present when this play counted).
        means = list(data.skill_means)
        if not data.window and data.unhinted:
            means = means[:-1]
        rewards = data.pooled_unhinted
        slow = moving_average(means, o.baseline_gamma)
        fast = moving_average(means, o.fast_gamma)
        baseline = slow if slow is not None else 0.0
        mean = _mean(rewards)
        reward = abs(mean - baseline) if rewards else 0.0
        signed = (fast - slow) / (2 * (o.fast_gamma - o.baseline_gamma)) if means else 0.0
        figures |= {"baseline": baseline, "progress": mean - baseline,
                    "mu_slow": baseline, "mu_fast": fast if fast is not None else 0.0,
                    "signed_lp": signed, "skill_windows": float(len(means))}
        if o.solver_variance and rewards and (len(rewards) > 1 or not data.window):
            figures["solver_variance_reward"] = solver_variance_reward(rewards)
            reward += figures["solver_variance_reward"]
        return Difficulty(figures=figures, designer_reward=reward)

    def _variance(self, data: EstimateInput, figures: dict) -> float:
        """The solver-variance reward (0 unless ``solver_variance``; needs two plays)."""
        rewards = data.pooled_unhinted
        if not self.options.solver_variance or len(rewards) < 2:
            return 0.0
        reward = solver_variance_reward(rewards)
        figures["solver_variance_reward"] = reward
        return reward


class LearningProgressPerStep(_ProgressEstimator):
    """The reference's micro learning progress (its ``micro_lp`` variant): over the latest plays
    (a window's, for a delayed reward), the mean reward of the late half's plays minus the early
    half's (``progress: difference``), or the change fitted by a least-squares line through the
    per-iteration means weighted by episodes (``slope``); floored at 0 unless ``signed``."""

    def estimate(self, data: EstimateInput) -> Difficulty:
        figures = _figures(data.hinted, data.unhinted, self.threshold)
        plays = [p for p in (data.window or _plays(data))
                 if p.unhinted][-self.options.recent_plays:]
        if self.options.progress == "difference" and len(plays) >= 2:
            early, late = early_late(plays)
            change = late - early
            figures |= {"progress": change, "early_mean": early, "late_mean": late,
                        "recent_plays": float(len(plays)), "cold_start": 0.0}
            return Difficulty(figures=figures,
                              designer_reward=change if self.options.signed else max(change, 0.0))
        slope = None if self.options.progress == "difference" else _weighted_slope(
            [float(p.iteration) for p in plays], [fmean(p.unhinted) for p in plays],
            [float(len(p.unhinted)) for p in plays])
        if slope is None:
            figures |= {"progress": 0.0, "progress_per_iteration": 0.0,
                        "recent_plays": float(len(plays)), "cold_start": 1.0}
            return Difficulty(figures=figures, designer_reward=self._cold(figures))
        change = slope * (plays[-1].iteration - plays[0].iteration)
        figures |= {"progress": change, "progress_per_iteration": slope,
                    "recent_plays": float(len(plays)), "cold_start": 0.0}
        return Difficulty(figures=figures,
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
        rewards = [r for p in (data.window or _plays(data))[-self.options.recent_plays:]
                   for r in p.unhinted]
        p = _win_rate(rewards, self.threshold)
        figures |= {"recent_win_rate": p, "recent_episodes": float(len(rewards))}
        return Difficulty(figures=figures, designer_reward=4.0 * p * (1.0 - p))


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
        return Difficulty(figures=figures, designer_reward=math.exp(-o.beta * (p - o.alpha) ** 2))
