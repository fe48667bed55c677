"""Built-in difficulty estimators: ``regret``, ``blend``, ``learnability`` and ``solve-rate``.

Episode rewards are in [-1, 1]; an episode counts as a win when its reward is at least the run's
``loop.success_threshold`` (1.0 by default: full success). The formulas follow the SPADE reference
implementation (regret, blend, plateau) and Absolute Zero (learnability); see ``docs/estimators.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from pydantic import BaseModel, ConfigDict, Field

from spade_core.components import BuildContext
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import DifficultyEstimator
from spade_core.records import Difficulty, EnvProgram


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


class _Estimator(DifficultyEstimator):
    """Options plus the run's success threshold (the win test of every built-in estimator)."""

    def __init__(self, options: BaseModel, success_threshold: float = 1.0) -> None:
        self.options = options
        self.threshold = success_threshold


class Regret(_Estimator):
    """Designer reward = mean hinted reward - mean unhinted reward (floored at 0 by default)."""

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        figures = _figures(hinted, unhinted, self.threshold)
        reward = figures["regret"]
        if self.options.floor_negative:
            reward = max(reward, 0.0)
        return Difficulty(figures=figures, designer_reward=reward, regret=figures["regret"])


class BlendOptions(_Options):
    regret_weight: float = Field(default=0.4, ge=0.0)
    plateau_weight: float = Field(default=0.6, ge=0.0)
    regret_saturation: float = Field(default=0.15, gt=0.0,
                                     description="regret at which the regret term reaches 1")
    plateau_low: float = Field(default=0.4, ge=0.0, le=1.0)
    plateau_high: float = Field(default=0.6, ge=0.0, le=1.0)
    plateau_ramp: float = Field(default=0.25, ge=0.0)


class Blend(_Estimator):
    """The reference's shipped default: w_r * clip(regret / s, 0, 1) + w_p * plateau(win rate)."""

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        o = self.options
        figures = _figures(hinted, unhinted, self.threshold)
        regret_term = min(max(figures["regret"] / o.regret_saturation, 0.0), 1.0)
        plateau_term = plateau(figures["win_rate"], o.plateau_low, o.plateau_high, o.plateau_ramp)
        figures |= {"regret_term": regret_term, "plateau_term": plateau_term}
        return Difficulty(figures=figures, regret=figures["regret"],
                          designer_reward=o.regret_weight * regret_term
                          + o.plateau_weight * plateau_term)


class Learnability(_Estimator):
    """Absolute Zero's learnability: 1 - p when 0 < p < 1 (p = unhinted win rate), else 0."""

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        figures = _figures(hinted, unhinted, self.threshold)
        p = figures["win_rate"]
        return Difficulty(figures=figures, regret=figures["regret"],
                          designer_reward=(1.0 - p) if 0.0 < p < 1.0 else 0.0)


class SolveRateOptions(_Options):
    plateau_low: float = Field(default=0.4, ge=0.0, le=1.0)
    plateau_high: float = Field(default=0.6, ge=0.0, le=1.0)
    plateau_ramp: float = Field(default=0.25, ge=0.0)


class SolveRate(_Estimator):
    """Plateau of the unhinted win rate only: rewards environments solved about half the time."""

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        o = self.options
        figures = _figures(hinted, unhinted, self.threshold)
        return Difficulty(figures=figures, regret=figures["regret"], designer_reward=plateau(
            figures["win_rate"], o.plateau_low, o.plateau_high, o.plateau_ramp))


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
