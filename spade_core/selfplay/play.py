"""Step: play. K unhinted and H hinted episodes per playable environment (K =
``loop.rollouts_per_env``, H = ``loop.hint_plays_per_env``, default K; none hinted in a window's
later iterations), on the same seeds, on the sessions the hint step opened, with generation
batched across every environment. Plays that raised or timed out are dropped as the reference
drops them (``loop.failed_plays``), and each hint is judged against its plays."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spade_core.config.schema import LoopSection
from spade_core.phases import PhaseTimer
from spade_core.records import EnvStatus
from spade_core.selfplay.hint_writer import HintDiagnostics, hint_hurt
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.rollouts import RolloutRequest, run_rollouts
from spade_core.selfplay.sessions import PlaySessions

if TYPE_CHECKING:
    from spade_core.selfplay.built_components import Components


def play_sessions(c: "Components", loop: LoopSection, proposals: list[Proposal],
                  hinted: bool) -> PlaySessions:
    """The sessions of this iteration's plays (``hinted=False``: unhinted plays only)."""
    k = loop.rollouts_per_env
    h = (k if loop.hint_plays_per_env is None else loop.hint_plays_per_env) if hinted else 0
    return PlaySessions(c.sandbox, proposals, k, h)


def play(c: "Components", loop: LoopSection, tables: PlaySessions, seed: int,
         timer: PhaseTimer) -> None:
    """Roll out every environment still playable after the hint step; its episodes,
    conversations and failed plays go onto its proposal."""
    k, h = tables.rollouts, tables.hint_plays
    seeds = [seed + i for i in range(k)]
    hint_seeds = [seed + i for i in range(h)]
    now = [i for i, p in enumerate(tables.playable) if p.status == EnvStatus.FRONTIER]
    requests, sessions = [], []
    for i in now:
        p = tables.playable[i]
        unhinted, hinted = tables.rollout_sessions(i)
        requests.append(RolloutRequest(p.env_id, p.program, p.family, seeds))
        sessions.append(unhinted)
        if h:
            requests.append(RolloutRequest(p.env_id, p.program, p.family, hint_seeds,
                                           hint=p.hint))
            sessions.append(hinted)
    with timer.phase("rollout", total=k * len(requests)):
        episodes, conversations = run_rollouts(
            c.sandbox, c.backend, requests, max_turns=loop.max_turns,
            max_new_tokens=loop.agent_max_tokens, temperature=loop.agent_temperature,
            top_p=loop.agent_top_p, top_k=loop.agent_top_k,
            chat_template_kwargs=loop.template_kwargs("agent"), seed=seed,
            on_done=lambda n: timer.advance("rollout", n), sessions=sessions,
            batch=tables.batch, end_on_truncation=loop.end_on_truncation)
    per = 2 if h else 1
    for j, i in enumerate(now):
        p = tables.playable[i]
        p.unhinted = episodes[per * j]
        p.hinted = episodes[per * j + 1] if h else []
        p.conversations = [c for part in conversations[per * j:per * j + per] for c in part]
        if loop.failed_plays == "drop":
            _drop_failed(p)
        if h:
            judge_hint(p)


def judge_hint(p: Proposal) -> None:
    """The hint's diagnostics after its hinted plays: did they do worse than the unhinted ones,
    and does the hint claim an answer other than the solution's (where the family can tell)."""
    diagnostics = p.hint_diagnostics or HintDiagnostics(source="kept")
    diagnostics.hurt = hint_hurt([e.reward for e in p.hinted], [e.reward for e in p.unhinted])
    try:
        diagnostics.contradicts = p.family.hint_contradicts(p.hint, p.solution)
    except Exception:  # noqa: BLE001 - a diagnostic must not end the run: "cannot tell"
        diagnostics.contradicts = None
    p.hint_diagnostics = diagnostics


def _drop_failed(p: Proposal) -> None:
    """The reference's rule for plays that raised or timed out: an unhinted one is dropped (no
    win rate, regret or agent sample; kept in ``p.failed``), its conversation with it. A hinted
    one stays, with its reward 0: the reference's hint arm scores a broken hint play as 0."""
    n = len(p.unhinted)
    kept = [k for k, e in enumerate(p.unhinted) if e.error is None]
    p.failed = [e for e in p.unhinted if e.error is not None]
    p.unhinted = [p.unhinted[k] for k in kept]
    p.conversations = [p.conversations[k] for k in kept] + p.conversations[n:]
