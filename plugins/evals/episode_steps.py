"""Episodes of an interactive suite, each played in a worker of its own (BFCL multi-turn, GEM,
τ²-bench): one batched sandbox call for many of them (an episode whose worker failed is marked
failed), their scores, and closing their workers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spade_core.errors import SandboxError
from spade_core.interfaces import Sandbox


def start_episodes(sandbox: Sandbox, episodes: list[Any], program: str, family: Any,
                   request: Callable[[Any], str]) -> list[Any]:
    """Open a worker per episode on ``program`` (sessions of ``family``), reset them in one call
    and send each live episode its ``request(episode)`` in one more; the answers in the order of
    ``episodes``, ``None`` for an episode whose worker failed (which is marked failed)."""
    for episode in episodes:
        try:
            episode.session = sandbox.open(program, family=family)
        except SandboxError:
            episode.fail()
    live = [e for e in episodes if not e.failed]
    for episode, first in zip(live, sandbox.reset_many([(e.session, None) for e in live]),
                              strict=True):
        if isinstance(first, SandboxError):
            episode.fail()
    return ask(sandbox, episodes, request)


def ask(sandbox: Sandbox, episodes: list[Any], request: Callable[[Any], str]) -> list[Any]:
    """Send every episode not failed its ``request(episode)`` in one call; the answers in the
    order of ``episodes``, ``None`` for a failed episode or one whose worker fails now."""
    live = [e for e in episodes if not e.failed]
    answers = dict(zip((id(e) for e in live), advance(sandbox, [(e, request(e)) for e in live])))
    return [answers.get(id(e)) for e in episodes]


def advance(sandbox: Sandbox, pending: list[tuple[Any, str]]) -> list[Any]:
    """Send each ``(episode, request)`` its request in one ``step_many`` call (an episode has a
    ``session`` and a ``fail()``); the answers in order, ``None`` for an episode whose worker
    failed (which is marked failed)."""
    if not pending:
        return []
    answers: list[Any] = []
    results = sandbox.step_many([(episode.session, request) for episode, request in pending])
    for (episode, _), result in zip(pending, results, strict=True):
        if isinstance(result, SandboxError):
            episode.fail()
            answers.append(None)
        else:
            answers.append(result)
    return answers


def collect_scores(sandbox: Sandbox, episodes: list[Any], scored: list[tuple[Any, str]],
                   scores: list[list[float]]) -> None:
    """Send the ``scored`` episodes' score requests in one call and append each episode's reward
    to its row of ``scores`` (0 for an episode not scored or whose worker failed)."""
    verdicts = dict(zip((id(e) for e, _ in scored), advance(sandbox, scored)))
    for index, episode in enumerate(episodes):
        verdict = verdicts.get(id(episode))
        scores[index].append(float(verdict.reward) if verdict is not None else 0.0)


def close_sessions(episodes: list[Any]) -> None:
    """Close every episode's worker; one that is already dead has nothing to close."""
    for episode in episodes:
        if episode.session is not None:
            try:
                episode.session.close()
            except Exception:  # noqa: BLE001 - a dead worker has nothing to close
                pass
