"""spade_core/eval/sandboxed_scoring.py: replies scored by a suite's trusted scorer inside a real
sandbox worker, in order, clipped to [0, 1]; a scorer that raises, or a worker that cannot open,
costs only that job's score."""

from __future__ import annotations

import pytest

from spade_core.errors import SandboxError
from spade_core.eval.sandboxed_scoring import (
    ScorerFamily,
    ScoringJob,
    request_job,
    score_in_sandbox,
)
from spade_core.records import Verdict, VerdictCategory

SCORER = '''
def score_request(request):
    if request.get("raise"):
        raise ValueError("a scorer bug")
    return request["score"]
'''


@pytest.fixture(scope="module")
def family():
    return ScorerFamily("test", SCORER)


def test_scores_come_back_in_order_and_clipped(scoring_sandbox, family):
    requests = [{"score": 0.25}, {"score": 3.0}, {"score": -1.0}, {"raise": True},
                {"score": 1.0}]
    scores = score_in_sandbox(scoring_sandbox, [request_job(family, r) for r in requests])
    assert scores == [0.25, 1.0, 0.0, 0.0, 1.0]


def test_the_scorer_family_carries_the_trusted_base_and_the_suites_source(family):
    assert family.name == "scorer:test" and "class ReplyScorer" in family.prelude
    assert family.prelude.endswith(SCORER) and family.injected_names == ("ReplyScorer",)
    job = request_job(family, {"score": 1})
    assert job.action == '{"score": 1}' and job.seed is None


NO_WORKER = Verdict(valid=False, category=VerdictCategory.CRASH, message="no worker")


class FakeRefusingSandbox:
    """Refuses to open any worker."""

    def open_many(self, program, count, family=None):
        raise SandboxError(NO_WORKER)

    def open(self, program, family=None):
        raise SandboxError(NO_WORKER)

    def reset_many(self, pairs):
        return []

    def step_many(self, pairs):
        return []


def test_a_worker_that_cannot_open_scores_zero(family):
    jobs = [ScoringJob("program", family, "{}")] * 3
    assert score_in_sandbox(FakeRefusingSandbox(), jobs) == [0.0, 0.0, 0.0]
