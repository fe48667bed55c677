"""Built-in difficulty estimators: ``regret``, ``blend``, ``learnability`` and ``solve-rate``.

Episode rewards are in [-1, 1]; an episode counts as a win when its reward is at least
``win_threshold`` (1.0 by default: full success). The formulas follow the SPADE reference
implementation (regret, blend, plateau) and Absolute Zero (learnability); see ``docs/estimators.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from pydantic import BaseModel, ConfigDict, Field

from spade_core.hookspecs import hookimpl
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
    win_threshold: float = Field(default=1.0, gt=0.0, le=1.0,
                                 description="episode reward that counts as a win")


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


class Regret:
    """Designer reward = mean hinted reward - mean unhinted reward (floored at 0 by default)."""

    def __init__(self, options: RegretOptions) -> None:
        self.options = options

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        figures = _figures(hinted, unhinted, self.options.win_threshold)
        reward = figures["regret"]
        if self.options.floor_negative:
            reward = max(reward, 0.0)
        return Difficulty(figures=figures, designer_reward=reward)


class BlendOptions(_Options):
    regret_weight: float = Field(default=0.4, ge=0.0)
    plateau_weight: float = Field(default=0.6, ge=0.0)
    regret_saturation: float = Field(default=0.15, gt=0.0,
                                     description="regret at which the regret term reaches 1")
    plateau_low: float = Field(default=0.4, ge=0.0, le=1.0)
    plateau_high: float = Field(default=0.6, ge=0.0, le=1.0)
    plateau_ramp: float = Field(default=0.25, ge=0.0)


class Blend:
    """The reference's shipped default: w_r * clip(regret / s, 0, 1) + w_p * plateau(win rate)."""

    def __init__(self, options: BlendOptions) -> None:
        self.options = options

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        o = self.options
        figures = _figures(hinted, unhinted, o.win_threshold)
        regret_term = min(max(figures["regret"] / o.regret_saturation, 0.0), 1.0)
        plateau_term = plateau(figures["win_rate"], o.plateau_low, o.plateau_high, o.plateau_ramp)
        figures |= {"regret_term": regret_term, "plateau_term": plateau_term}
        return Difficulty(figures=figures,
                          designer_reward=o.regret_weight * regret_term
                          + o.plateau_weight * plateau_term)


class Learnability:
    """Absolute Zero's learnability: 1 - p when 0 < p < 1 (p = unhinted win rate), else 0."""

    def __init__(self, options: _Options) -> None:
        self.options = options

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        figures = _figures(hinted, unhinted, self.options.win_threshold)
        p = figures["win_rate"]
        return Difficulty(figures=figures, designer_reward=(1.0 - p) if 0.0 < p < 1.0 else 0.0)


class SolveRateOptions(_Options):
    plateau_low: float = Field(default=0.4, ge=0.0, le=1.0)
    plateau_high: float = Field(default=0.6, ge=0.0, le=1.0)
    plateau_ramp: float = Field(default=0.25, ge=0.0)


class SolveRate:
    """Plateau of the unhinted win rate only: rewards environments solved about half the time."""

    def __init__(self, options: SolveRateOptions) -> None:
        self.options = options

    def estimate(self, env: EnvProgram, hinted: Sequence[float],
                 unhinted: Sequence[float]) -> Difficulty:
        o = self.options
        figures = _figures(hinted, unhinted, o.win_threshold)
        return Difficulty(figures=figures, designer_reward=plateau(
            figures["win_rate"], o.plateau_low, o.plateau_high, o.plateau_ramp))


@hookimpl
def register_difficulty_estimators(register):
    register("regret", lambda o, ctx: Regret(o), RegretOptions,
             "mean hinted reward minus mean unhinted reward")
    register("blend", lambda o, ctx: Blend(o), BlendOptions,
             "0.4 * saturating regret + 0.6 * win-rate plateau (SPADE's shipped default)")
    register("learnability", lambda o, ctx: Learnability(o), _Options,
             "Absolute Zero: 1 - p for 0 < p < 1, else 0")
    register("solve-rate", lambda o, ctx: SolveRate(o), SolveRateOptions,
             "win-rate plateau only")
