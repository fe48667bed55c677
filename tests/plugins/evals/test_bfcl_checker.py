"""BFCL's AST checker as the bfcl suite's scorer (in a sandbox worker): a call is needed, the
right function, all of a parallel set in any order; irrelevance passes on no call."""

from __future__ import annotations

import importlib.util

import pytest

from spade_core.components import BuildContext
from spade_core.interfaces import EvalSettings, EvalSuite

from fakes.eval_runs import build_suite, three_ways

#: The bfcl suite reads the data of bfcl-eval, installed without its pinned dependencies.
needs_bfcl = pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None,
                                reason="pip install --no-deps bfcl-eval==2026.3.23")

SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0, max_turns=12)


@pytest.fixture(autouse=True)
def _sandbox(scoring_sandbox):
    global SANDBOX
    SANDBOX = scoring_sandbox


SANDBOX = None


def _suite(name: str, options: dict | None = None, context: BuildContext | None = None
           ) -> EvalSuite:
    return build_suite(name, options, context or BuildContext(components={"sandbox": SANDBOX}))


def _three_ways(suite: EvalSuite, limit: int) -> tuple[float, ...]:
    return three_ways(suite, limit, SETTINGS)


@needs_bfcl
def test_bfcl_checker_rules():
    suite = _suite("bfcl", {"categories": ["simple", "irrelevance", "parallel"]})
    simple, irrelevance, parallel = suite.items(3, 0)
    assert simple.bucket == "simple" and parallel.bucket == "parallel"
    assert simple.tools and simple.tools[0]["function"]["parameters"]["type"] == "object"
    assert suite.score(simple, simple.gold[0]) == 1.0
    assert suite.score(simple, "The area is 25.") == 0.0  # no call
    assert suite.score(irrelevance, "I cannot help with these tools.") == 1.0
    assert suite.score(irrelevance, simple.gold[0].replace(
        simple.tools[0]["function"]["name"], irrelevance.tools[0]["function"]["name"])) == 0.0
    calls = parallel.gold[0].split("\n")
    assert len(calls) > 1
    assert suite.score(parallel, "\n".join(reversed(calls))) == 1.0  # order-free, as BFCL
    assert suite.score(parallel, calls[0]) == 0.0
