"""Step: hint. Each playable environment is opened once for the iteration (all its play sessions
in one worker, :class:`~spade_core.selfplay.sessions.PlaySessions`) and its first session reset
on the iteration's first seed: the first observation, the environment's own ``info["hint"]`` and
the solution (kept out of the hint) are read, and an environment that fails here is rejected.
Then a hint is written for each environment that will have hinted plays (a replay keeps the hint
it was first played with), redacted where it gives the solution away (docs/hints.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spade_core.config.schema import LoopSection
from spade_core.errors import SandboxError
from spade_core.interfaces import EnvFamily, SandboxSession
from spade_core.phases import PhaseTimer
from spade_core.records import EnvStatus
from spade_core.selfplay.hint_writer import (
    HINT_SYSTEM,
    HintDiagnostics,
    generate_hints,
    redact_leaks,
    secrets_of,
)
from spade_core.selfplay.sessions import PlaySessions, SessionBatch
from spade_core.untrusted_text import PARSE_FAILURES

if TYPE_CHECKING:
    from spade_core.selfplay.built_components import Components
    from spade_core.selfplay.proposal import Proposal


def hint(c: "Components", loop: LoopSection, tables: PlaySessions, seed: int,
         timer: PhaseTimer) -> None:
    """Open the plays' sessions, read each environment's first observation on ``seed`` and write
    the hints of the environments with hinted plays (``tables.hint_plays`` > 0)."""
    playable = tables.playable
    with timer.phase("hint", total=len(playable)):
        firsts = tables.open()
        provided = _first_observations(tables.batch, playable, firsts, seed)
        tables.batch.close([s for s in firsts if not isinstance(s, SandboxError)])
        # A replayed environment keeps the hint it was first played with; no hint is written
        # when no hinted episode is played (hint_plays_per_env 0, a window's later iterations).
        fresh = [i for i, p in enumerate(playable) if p.status == EnvStatus.FRONTIER
                 and tables.hint_plays and not (p.replayed and p.hint)]
        hints = generate_hints(
            c.hint_backend or c.backend, [playable[i].program for i in fresh],
            [playable[i].first_observation for i in fresh], [provided[i] for i in fresh],
            max_new_tokens=loop.hint_max_tokens, temperature=loop.hint_temperature,
            top_p=loop.hint_top_p, top_k=loop.hint_top_k, seed=seed,
            systems=[_hint_system(c, playable[i].family) for i in fresh]
        ) if fresh else []
        for i, text in zip(fresh, hints, strict=True):
            p = playable[i]
            p.hint, p.hint_redacted = redact_leaks(text, p.secrets)
            p.hint_diagnostics = HintDiagnostics(
                source="env" if provided[i] else "model", redacted=p.hint_redacted)
        timer.advance("hint", len(playable))


def _first_observations(batch: SessionBatch, playable: list["Proposal"],
                        sessions: list[SandboxSession | SandboxError],
                        seed: int) -> list[str | None]:
    """Reset each environment once on the first seed (one session each): its first observation and
    ``info["hint"]``; the solution is read too, to keep it out of the hint. Environments whose
    session fails are rejected with the failure's verdict."""
    provided: list[str | None] = [None] * len(playable)
    live = [(i, s) for i, s in enumerate(sessions) if not isinstance(s, SandboxError)]
    resets = batch.reset([(session, seed) for _, session in live])
    ok = [(i, session, r) for (i, session), r in zip(live, resets)
          if not isinstance(r, SandboxError)]
    solutions = batch.map(lambda item: _solution(item[1], playable[item[0]].family), ok)
    for (i, _, (observation, info)), actions in zip(ok, solutions, strict=True):
        p = playable[i]
        p.first_observation, p.solution = observation, actions
        p.secrets = secrets_of(actions or [])
        hint = info.get("hint") if isinstance(info, dict) else None
        provided[i] = str(hint) if isinstance(hint, str) and hint.strip() else None
    failures = {i: s for i, s in enumerate(sessions) if isinstance(s, SandboxError)}
    failures.update({i: r for (i, _), r in zip(live, resets) if isinstance(r, SandboxError)})
    for i, error in failures.items():
        playable[i].reject(error.verdict)
    return provided


def _solution(session: SandboxSession, family: EnvFamily) -> list[str] | None:
    """The seeded instance's solution as actions: hints are kept from giving it away and checked
    against its answer. ``None`` (unknown) when the worker failed or the family could not read
    the program's text (whatever its shape: a parse failure is never the run's end)."""
    try:
        return family.solution_actions(session.solution())
    except (SandboxError, *PARSE_FAILURES):
        return None


def _hint_system(c: "Components", family: EnvFamily) -> str:
    """The hint call's instructions for ``family`` (config ``hints.prompt``)."""
    return family.hint_instructions() if c.hint_prompt == "family" else HINT_SYSTEM
