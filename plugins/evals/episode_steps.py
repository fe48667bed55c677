"""One batched sandbox call for many episodes of an interactive suite, each played in a worker of
its own (BFCL multi-turn, τ²-bench): an episode whose worker failed is marked failed."""

from __future__ import annotations

from typing import Any

from spade_core.errors import SandboxError
from spade_core.interfaces import Sandbox


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
