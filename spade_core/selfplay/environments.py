"""Step: draw. Where an iteration's environments come from when the designer does not write
them: a fixed pool's draw, the memory's frontier replayed, a window's own environments played
again. Reading the memory's frontier is timed as the ``draw`` phase."""

from __future__ import annotations

import random

from spade_core.config.schema import LoopSection
from spade_core.interfaces import EnvFamily, EnvRecord
from spade_core.phases import PhaseTimer
from spade_core.records import DesignTarget, Document, EnvStatus, Verdict
from spade_core.selfplay.pool import POOL_VERDICT, PoolSampler, pool_document
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.proposal import Proposal


def draw_from_pool(c: Components, loop: LoopSection, seed: int,
                   timer: PhaseTimer, replays: int | None = None,
                   chosen: list[str] | None = None) -> list[Proposal]:
    """Fixed-pool mode, through the same draw as self-play's replay: the pool stands in for the
    designer. The next ``envs_per_iteration`` pool environments never played yet (in the pool's
    order, by id) are this iteration's fresh ones; ``replays`` (default ``loop.replay_envs``)
    frontier environments already played are replayed as in self-play, and replays also fill
    the fresh slots once every pool environment has been played. Retired environments
    (mastered, too hard, aged) are never drawn. ``chosen`` (``loop.pool_order: shuffle``):
    exactly these pool environments, whatever their status, and no replay."""
    family_of = {f.name: f for f in c.families}
    if chosen is not None:
        records = [r for r in (c.memory.get(i) for i in chosen)
                   if r is not None and r.family in family_of]
        return [_proposal(i, r, family_of, pool_document(r), POOL_VERDICT, replayed=False)
                for i, r in enumerate(records)]
    with timer.phase("draw"):
        frontier = _frontier(c, family_of)
    unplayed = sorted((r for r in frontier if not r.history), key=lambda r: r.id)
    fresh = [_proposal(i, r, family_of, pool_document(r), POOL_VERDICT, replayed=False)
             for i, r in enumerate(unplayed[:loop.envs_per_iteration])]
    replays = loop.replay_envs if replays is None else replays
    more = replays + loop.envs_per_iteration - len(fresh)
    return fresh + draw_replay(c, loop, {p.env_id for p in fresh}, seed, timer, count=more,
                               frontier=frontier)


#: The verdict a replayed environment carries: it passed validation when it was proposed.
REPLAY_VERDICT = Verdict(valid=True, category="ok", message="replayed from the memory's frontier")


def _replay_order(records: list[EnvRecord], priority: str, seed: int) -> list[EnvRecord]:
    """Frontier records in the order ``loop.replay_priority`` asks for (ties by id, so the
    order, and with it a resumed run, is deterministic)."""
    if priority == "uniform":
        ordered = sorted(records, key=lambda r: r.id)
        random.Random(seed).shuffle(ordered)
        return ordered
    if priority == "age":  # least recently played first
        return sorted(records, key=lambda r: (r.history[-1].iteration, r.id))
    return sorted(records, key=lambda r: (-r.history[-1].designer_reward,
                                          -r.history[-1].figures.get("regret", 0.0), r.id))


def _frontier(c: Components, family_of: dict[str, EnvFamily]) -> list[EnvRecord]:
    """The memory's frontier records of the run's families (one memory query)."""
    return [r for r in c.memory.by_status((EnvStatus.FRONTIER,)) if r.family in family_of]


def _proposal(index: int, record: EnvRecord, family_of: dict[str, EnvFamily],
              document: Document, verdict: Verdict, replayed: bool) -> Proposal:
    """A stored, already valid environment to play again (a replay, or a fixed pool's entry),
    with what its designer was asked for and, for a replay, the hint it was first played with."""
    return Proposal(index=index, family=family_of[record.family], document=document, prompt=[],
                    program=record.source, verdict=verdict, status=EnvStatus.FRONTIER,
                    hint=record.hint if replayed else "", replayed=replayed,
                    target=DesignTarget(skill=record.skill or None, level=record.level))


def draw_replay(c: Components, loop: LoopSection, exclude: set[str], seed: int,
                timer: PhaseTimer, count: int | None = None,
                frontier: list[EnvRecord] | None = None) -> list[Proposal]:
    """Up to ``count`` (default ``loop.replay_envs``) frontier environments already played (and
    younger than ``loop.replay_max_age`` iterations), of the run's families, not among
    ``exclude``, in ``loop.replay_priority`` order. ``frontier``: the frontier records when the
    caller has already read them."""
    count = loop.replay_envs if count is None else count
    if count <= 0:
        return []
    family_of = {f.name: f for f in c.families}
    if frontier is None:
        with timer.phase("draw"):
            frontier = _frontier(c, family_of)
    candidates = [r for r in frontier if r.history and r.id not in exclude
                  and len(r.history) < loop.replay_max_age]
    chosen = _replay_order(candidates, loop.replay_priority, seed)[:count]
    return [_proposal(i, r, family_of, Document(id=r.doc_id or f"memory:{r.id}",
                                                text=r.description, source="memory"),
                      REPLAY_VERDICT, replayed=True)
            for i, r in enumerate(chosen)]


def window_replays(c: Components, env_ids: list[str], start: int,
                   drop_timed_out: bool = False) -> list[Proposal]:
    """A window's environments played again in its later iterations: from the memory, with the
    hint and the hinted rewards of the window's start (no hinted episode is played again).
    ``drop_timed_out`` (``loop.timeouts: start``, the reference's blacklist of hung games): an
    environment whose own code timed out in an earlier iteration of the window is not played
    again."""
    family_of = {f.name: f for f in c.families}
    proposals = []
    for env_id in env_ids:
        record = c.memory.get(env_id)
        if record is None or record.family not in family_of:
            continue
        if drop_timed_out and any(h.figures.get("step_timeouts", 0.0) > 0
                                  for h in record.history if h.iteration >= start):
            continue
        p = _proposal(len(proposals), record, family_of,
                      Document(id=record.doc_id or f"memory:{record.id}", text=record.description,
                               source="memory"), REPLAY_VERDICT, replayed=True)
        first = next((h for h in record.history if h.iteration == start), None)
        p.hint_rewards = list(first.hinted) if first is not None else []
        proposals.append(p)
    return proposals


def pool_choice(pool: PoolSampler, loop: LoopSection, iteration: int, interval: int,
                run_seed: int) -> list[str] | None:
    """With ``loop.pool_order: shuffle`` (the reference's fixed pool), the pool environments of
    this iteration's draw: one draw per ``interval`` iterations (a regeneration window; 1 in
    the frontier schedule), seeded by ``loop.pool_seed`` (default: the run's seed). ``None``:
    the pool's own order (:func:`draw_from_pool` takes the next unplayed)."""
    if loop.pool_order != "shuffle":
        return None
    draw = iteration // interval
    seed = loop.pool_seed if loop.pool_seed is not None else run_seed
    return pool.shuffled(loop.envs_per_iteration, draw, seed)
