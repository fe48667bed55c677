"""The configured difficulty estimator, held to its contract, and the per-skill means some
estimators read: shared by the estimate step (an immediate estimate) and the designer's reward
(a delayed one over a regeneration window)."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean

from spade_core.errors import PluginError, SpadeError
from spade_core.interfaces import DifficultyEstimator, EnvRecord, EstimateInput
from spade_core.interfaces.estimator import contract_problem
from spade_core.records import Difficulty

#: How an estimate looks, for the errors that refuse one.
SHAPE = ("Difficulty(figures=..., designer_reward=...), train=False to keep the design out of "
         "training, regret left to the loop (docs/plugins.md)")


def checked_estimate(estimator: DifficultyEstimator, data: EstimateInput,
                     label: str = "") -> Difficulty:
    """``estimator.estimate(data)`` held to its contract (``DifficultyEstimator``), with the
    loop's ``regret`` (:attr:`EstimateInput.regret`) filled in. Any failure is a
    :class:`PluginError` that names the estimator as the config selects it (``label``: its
    registered name, plugin and distribution)."""
    who = label or f"difficulty estimator {type(estimator).__name__}"
    try:
        difficulty = estimator.estimate(data)
    except SpadeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the plugin's failure, named for the user
        raise PluginError(f"{who}: estimate() failed: {type(exc).__name__}: {exc} (an estimate "
                          f"is {SHAPE})") from exc
    problem = contract_problem(difficulty)
    if problem:
        raise PluginError(f"{who}: estimate() returned {problem}; an estimate is {SHAPE}")
    return difficulty.with_regret(data.regret)


def skill_window_means(records: Iterable[EnvRecord], interval: int,
                       through: int) -> dict[str, list[float]]:
    """Per skill (a record's ``skill``, else its family), the mean unhinted reward of each
    period up to period ``through`` (a period: ``interval`` iterations, a regeneration window;
    1 in the frontier schedule), every play of the skill's environments in it pooled, oldest
    first; periods without a play are left out. The reference's per-skill learning-potential
    trackers are updated with exactly these means, one per window."""
    pooled: dict[str, dict[int, list[float]]] = {}
    for record in records:
        skill = record.skill or record.family
        for entry in record.history:
            period = entry.iteration // interval
            if period <= through and entry.unhinted:
                pooled.setdefault(skill, {}).setdefault(period, []).extend(entry.unhinted)
    return {skill: [fmean(by_period[p]) for p in sorted(by_period)]
            for skill, by_period in pooled.items()}
