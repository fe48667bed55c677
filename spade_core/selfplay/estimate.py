"""Step: estimate. Each played environment's difficulty from its hinted and unhinted plays and
its memory record's earlier history (the configured difficulty estimator, held to its
contract); a proposal that was neither played nor refused as a duplicate is rejected. The
designer's reward is set from the estimate by the next step (:mod:`designer_reward`)."""

from __future__ import annotations

from spade_core.config.schema import LoopSection
from spade_core.interfaces import EstimateInput
from spade_core.records import EnvProgram, EnvStatus
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.difficulty import checked_estimate, skill_window_means
from spade_core.selfplay.proposal import Proposal


def estimate(c: Components, loop: LoopSection, proposals: list[Proposal],
             iteration: int) -> None:
    """The difficulty of each played proposal (``p.difficulty``), by the estimator over its
    plays and its memory record's earlier history; any other proposal, unless a duplicate, is
    rejected. Reads the memory, writes nothing to it (this iteration's plays are stored by the
    remember step, after it)."""
    means = (_skill_means(c, proposals, iteration)
             if c.estimator.uses_skill_means else {})
    for p in proposals:
        if p.played:
            earlier = c.memory.get(p.env_id)
            p.difficulty = checked_estimate(c.estimator, EstimateInput(
                env=EnvProgram(source=p.program, family=p.family.name, doc_id=p.document.id),
                hinted=_hint_rewards(p), unhinted=[e.reward for e in p.unhinted],
                iteration=iteration,
                history=[h for h in earlier.history if h.iteration < iteration] if earlier else (),
                success_threshold=loop.success_threshold,
                step_timeouts=p.step_timeouts, skill_means=means.get(_skill(p), ())),
                c.estimator_label)
        elif p.status != EnvStatus.DUPLICATE:
            p.reject()


def _hint_rewards(p: Proposal) -> list[float]:
    """The hinted rewards ``p``'s estimate uses: this iteration's, or in a window's later
    iterations those measured at the window's start."""
    return [e.reward for e in p.hinted] if p.hint_rewards is None else list(p.hint_rewards)


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
