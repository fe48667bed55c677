"""Step: remember. Every proposal goes into the environment memory: a played one with this
iteration's plays, figures and designer reward (the memory decides whether it is now mastered or
too hard), any other with its status and verdict; in the frontier schedule, environments played
too long leave the frontier (:func:`retire_aged`). Runs after the estimate and the designer's
reward, which it stores."""

from __future__ import annotations

import time

from spade_core.config.schema import LoopSection
from spade_core.interfaces import EnvRecord
from spade_core.records import EnvStatus
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.proposal import Proposal


def remember(c: Components, proposals: list[Proposal], iteration: int) -> list[EnvRecord]:
    """Each proposal into the memory: a played one with this iteration's hinted and unhinted
    rewards, its estimate's figures (and its code's timeouts) and its designer reward, its status
    then the memory's; any other stored once, with its status and verdict. Returns the records
    mastered now."""
    mastered = []
    for p in proposals:
        if not p.played:
            _remember(c, p)
            continue
        if c.memory.get(p.env_id) is None:
            _add_record(c, p)
        figures = dict(p.difficulty.figures) if p.difficulty else {}
        figures["step_timeouts"] = float(p.step_timeouts)
        record = c.memory.update_stats(p.env_id, iteration, [e.reward for e in p.hinted],
                                       [e.reward for e in p.unhinted], figures,
                                       p.designer_reward)
        p.take_status(record)
        if record.status == EnvStatus.MASTERED:
            mastered.append(record)
    return mastered


def retire_aged(c: Components, loop: LoopSection, proposals: list[Proposal]) -> list[EnvRecord]:
    """Played environments still on the frontier after ``loop.replay_max_age`` iterations of
    play leave it as ``retired`` (the frontier schedule); returns their records."""
    retired = []
    for p in proposals:
        if p.status == EnvStatus.FRONTIER and p.plays >= loop.replay_max_age:
            retired.append(c.memory.set_status(p.env_id, EnvStatus.RETIRED))
            p.retire()
    return retired


def _remember(c: Components, p: Proposal) -> None:
    """Store ``p`` in the memory unless its program is already there."""
    if c.memory.get(p.env_id) is None:
        _add_record(c, p)


def _add_record(c: Components, p: Proposal) -> None:
    now = time.time()
    verdict = p.verdict
    c.memory.add(EnvRecord(
        id=p.env_id, source=p.program or p.completions[-1], family=p.family.name,
        status=p.status, doc_id=p.document.id,
        verdict_category=verdict.category if verdict else "",
        verdict_message=verdict.message if verdict else "", hint=p.hint,
        duplicate_of=p.duplicate_of, duplicate_similarity=p.similarity,
        created_at=now, updated_at=now, skill=p.target.skill or "", level=p.target.level,
        repairs=p.repairs,
    ))
