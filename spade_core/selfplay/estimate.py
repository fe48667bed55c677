"""Step: estimate. Each played environment's difficulty from its hinted and unhinted plays (the
configured difficulty estimator, held to its contract), and the designer's immediate reward; a
proposal that was not played gets the reward its verdict earns."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean

from spade_core.config.schema import LoopSection
from spade_core.errors import PluginError, SpadeError
from spade_core.interfaces import DifficultyEstimator, EnvRecord, EstimateInput
from spade_core.records import Difficulty, EnvProgram, EnvStatus, VerdictCategory
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.setup import Components


def checked_estimate(estimator: DifficultyEstimator, data: EstimateInput,
                     label: str = "") -> Difficulty:
    """``estimator.estimate(data)``, held to its contract: a :class:`Difficulty` with a finite
    ``regret``. Any failure is a :class:`PluginError` that names the estimator as the config
    selects it (``label``: its registered name, plugin and distribution)."""
    who = label or f"difficulty estimator {type(estimator).__name__}"
    try:
        difficulty = estimator.estimate(data)
    except SpadeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the plugin's failure, named for the user
        raise PluginError(f"{who}: estimate() failed: {type(exc).__name__}: {exc} (an estimate "
                          "is Difficulty(figures=..., designer_reward=..., regret=...), "
                          "docs/plugins.md)") from exc
    if not isinstance(difficulty, Difficulty) or not difficulty.has_regret:
        got = (f"regret={difficulty.regret!r}" if isinstance(difficulty, Difficulty)
               else f"a {type(difficulty).__name__}")
        raise PluginError(f"{who}: estimate() returned {got}; an estimate must be a Difficulty "
                          "whose regret is a finite number, the mean hinted minus the mean "
                          "unhinted reward (docs/plugins.md)")
    return difficulty


def estimate(c: Components, loop: LoopSection, proposals: list[Proposal],
             iteration: int) -> None:
    """Difficulty and designer reward for each proposal (``p.difficulty``,
    ``p.designer_reward``): a played one by the estimator, over its plays and its memory record's
    earlier history; a duplicate gets ``loop.duplicate_reward``; any other is rejected and gets
    its verdict's :func:`failure_reward`. Reads the memory, writes nothing to it."""
    means = (_skill_means(c, proposals, iteration)
             if c.estimator.uses_skill_means else {})
    for p in proposals:
        if played(p):
            earlier = c.memory.get(p.env_id)  # this iteration is added by ``remember``
            p.difficulty = checked_estimate(c.estimator, EstimateInput(
                env=EnvProgram(source=p.program, family=p.family.name, doc_id=p.document.id),
                hinted=hint_rewards(p), unhinted=[e.reward for e in p.unhinted],
                iteration=iteration,
                history=[h for h in earlier.history if h.iteration < iteration] if earlier else (),
                success_threshold=loop.success_threshold,
                step_timeouts=step_timeouts(p), skill_means=means.get(_skill(p), ())),
                c.estimator_label)
            p.designer_reward = p.difficulty.designer_reward
        elif p.status == EnvStatus.DUPLICATE:
            p.designer_reward = loop.duplicate_reward
        else:
            p.reject()
            p.designer_reward = failure_reward(loop, p.verdict.category if p.verdict else "")


def played(p: Proposal) -> bool:
    """Whether ``p`` was played this iteration (on the frontier, with unhinted plays, kept or
    dropped as failed): it then has an estimate and its plays go into the memory."""
    return p.status == EnvStatus.FRONTIER and bool(p.unhinted or p.failed)


def hint_rewards(p: Proposal) -> list[float]:
    """The hinted rewards ``p``'s estimate uses: this iteration's, or in a window's later
    iterations those measured at the window's start."""
    return [e.reward for e in p.hinted] if p.hint_rewards is None else list(p.hint_rewards)


def step_timeouts(p: Proposal) -> int:
    """Plays of ``p`` this iteration, hinted or not, that its own code timed out."""
    return sum(e.timed_out for e in p.unhinted + p.hinted + p.failed)


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


def _skill(p: Proposal) -> str:
    return p.target.skill or p.family.name


def _skill_means(c: Components, proposals: list[Proposal], iteration: int
                 ) -> dict[str, list[float]]:
    """Per skill, its pooled mean unhinted reward of each earlier iteration (from the memory)
    and then of this one (every play of this iteration's environments of the skill): an
    immediate estimate's ``EstimateInput.skill_means``."""
    means = skill_window_means(c.memory.records(), 1, iteration - 1)
    now: dict[str, list[float]] = {}
    for p in proposals:
        if p.status == EnvStatus.FRONTIER and p.unhinted:
            now.setdefault(_skill(p), []).extend(e.reward for e in p.unhinted)
    for skill, rewards in now.items():
        means[skill] = [*means.get(skill, []), sum(rewards) / len(rewards)]
    return means


def failure_reward(loop: LoopSection, category: str) -> float:
    """The designer's reward for a proposal that was not played, by verdict category."""
    return loop.timeout_reward if category == VerdictCategory.TIMEOUT else loop.invalid_reward
