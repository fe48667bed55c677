"""Scoring untrusted replies inside the sandbox.

A reply is text the model wrote; a benchmark's own scorer is third-party code that may interpret
it (reasoning-gym scorers ``eval()`` answers, sympy's parser ``eval()`` s formulas). So eval suites
never score a reply in the host process unless they declare their scorer safe there
(``EvalSuite.scores_in_process``): a reply is scored by a trusted environment in a sandbox worker,
``reset(seed)`` then ``step(reply)``, and the step's reward is the score.

Two kinds of scoring environment fit this shape, and both go through :func:`score_in_sandbox`:

- an env family's own program (a reasoning-gym item is a ``ReasoningGymEnv`` program at a seed,
  scored exactly as in training);
- a suite's trusted scorer source (:class:`ScorerFamily`): it defines
  ``score_request(request) -> float`` and runs as the prelude of :data:`SCORER_PROGRAM`, whose
  ``step`` takes the JSON of a request the host built (data only: nothing is pickled).

Jobs are batched: the instances of one program share a worker (``open_many``, several per worker),
every reset and every step go out as one batched call. A job whose worker failed (a reply that hit
a limit ends every instance of its worker) is retried once in a worker of its own, so one hostile
reply costs only its own score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spade_core.errors import SandboxError
from spade_core.interfaces.family import EnvFamily
from spade_core.interfaces.sandbox import Sandbox, SandboxSession

#: Most instances of one program in one worker.
INSTANCES_PER_WORKER = 32
#: Most workers open at once while a batch is scored.
WORKERS_AT_ONCE = 16

#: Trusted base of suite scorers: ``step`` parses the request and calls ``score_request``, which
#: the suite's own prelude source defines after it.
SCORER_BASE = '''
import json as _json
import math as _math

__all__ = list(globals().get("__all__", [])) + ["ReplyScorer"]


class ReplyScorer:
    """Scores one request per episode: ``step(json_request)`` -> reward = score in [0, 1]."""

    def reset(self, seed=None):
        return "Send the request to score.", {}

    def step(self, action):
        score = float(score_request(_json.loads(action)))
        if not _math.isfinite(score):
            score = 0.0
        return "Scored.", min(max(score, 0.0), 1.0), True, False, {}

    def solution(self):
        return None

    def close(self):
        pass
'''

#: The program every suite scorer runs: the environment class is the injected base, unchanged.
SCORER_PROGRAM = ('"""Scores one request with the suite\'s trusted scorer."""\n\n\n'
                  "class ReplyScoreEnv(ReplyScorer):\n    pass\n")


class ScorerFamily(EnvFamily):
    """The pseudo-family of a suite's scorer: its trusted source after :data:`SCORER_BASE` as the
    prelude, and the libraries the scorer imports, preloaded by the sandbox's fork servers."""

    def __init__(self, name: str, source: str, imports: Sequence[str] = (),
                 exported: Sequence[str] = ()) -> None:
        self.name = f"scorer:{name}"
        self._source = source
        self._imports = tuple(imports)
        self._exported = tuple(exported)

    @property
    def prelude(self) -> str:
        return SCORER_BASE + "\n\n" + self._source

    @property
    def injected_names(self) -> tuple[str, ...]:
        """``ReplyScorer`` and the names the suite's source exports (an environment base class
        of its own, for suites whose episodes are longer than one request)."""
        return ("ReplyScorer", *self._exported)

    @property
    def preload_imports(self) -> tuple[str, ...]:
        return self._imports

    def designer_guide(self, skill: str | None = None) -> str:
        return ""

    def skeleton(self) -> str:
        return ""

    def agent_instructions(self) -> str:
        return ""


@dataclass(frozen=True)
class ScoringJob:
    """One reply to score: ``program`` (with ``family``'s prelude) is reset at ``seed`` and
    stepped once with ``action``; the reward, clipped to [0, 1], is the score."""

    program: str
    family: EnvFamily
    action: str
    seed: int | None = None


def request_job(family: ScorerFamily, request: dict[str, Any]) -> ScoringJob:
    """A job for a suite scorer: ``request`` (JSON data) goes to its ``score_request``."""
    return ScoringJob(SCORER_PROGRAM, family, json.dumps(request))


def score_in_sandbox(sandbox: Sandbox, jobs: Sequence[ScoringJob]) -> list[float]:
    """The score of every job, in order; a job that fails twice (its program raised, or its
    worker hit a limit alone) scores 0."""
    scores: list[float | None] = [None] * len(jobs)
    groups: dict[tuple[str, int], list[int]] = {}
    for index, job in enumerate(jobs):
        groups.setdefault((job.program, id(job.family)), []).append(index)
    chunks = [indices[start:start + INSTANCES_PER_WORKER]
              for indices in groups.values()
              for start in range(0, len(indices), INSTANCES_PER_WORKER)]
    for start in range(0, len(chunks), WORKERS_AT_ONCE):
        _score_chunks(sandbox, jobs, chunks[start:start + WORKERS_AT_ONCE], scores)
    for index, score in enumerate(scores):
        if score is None:
            scores[index] = _score_alone(sandbox, jobs[index])
    return [float(s or 0.0) for s in scores]


def _score_chunks(sandbox: Sandbox, jobs: Sequence[ScoringJob], chunks: list[list[int]],
                  scores: list[float | None]) -> None:
    """Open one worker per chunk, then reset and step every instance in two batched calls; the
    jobs that fail stay ``None`` for a retry."""
    opened: list[tuple[int, SandboxSession]] = []
    try:
        for chunk in chunks:
            first = jobs[chunk[0]]
            try:
                sessions = sandbox.open_many(first.program, len(chunk), family=first.family)
            except SandboxError:
                continue
            opened.extend(zip(chunk, sessions))
        resets = sandbox.reset_many([(s, jobs[i].seed) for i, s in opened])
        ready = [(i, s) for (i, s), r in zip(opened, resets) if not isinstance(r, SandboxError)]
        steps = sandbox.step_many([(s, jobs[i].action) for i, s in ready])
        for (index, _), result in zip(ready, steps):
            if not isinstance(result, SandboxError):
                scores[index] = _clip(result.reward)
    finally:
        for _, session in opened:
            _close(session)


def _score_alone(sandbox: Sandbox, job: ScoringJob) -> float:
    try:
        session = sandbox.open(job.program, family=job.family)
    except SandboxError:
        return 0.0
    try:
        session.reset(job.seed)
        return _clip(session.step(job.action).reward)
    except SandboxError:
        return 0.0
    finally:
        _close(session)


def _clip(reward: float) -> float:
    value = float(reward)
    return min(max(value, 0.0), 1.0) if math.isfinite(value) else 0.0


def _close(session: SandboxSession) -> None:
    try:
        session.close()
    except Exception:  # noqa: BLE001 - a worker that died has nothing left to close
        pass
