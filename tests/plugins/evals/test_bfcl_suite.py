"""The bfcl suite scored through BFCL's checker in the sandbox: gold replies score 1.0, wrong
ones 0.0, right on every other item 0.5; live relevance and irrelevance are opposites."""

from __future__ import annotations

from spade_core.eval.scores import run_suite

from spade_core.interfaces import EvalSettings

from fakes.eval_runs import needs_bfcl, SUITE_SETTINGS as SETTINGS, SUITES

from fakes.eval_backends import FakeGoldBackend, FakeHalfBackend, FakeWrongBackend

_suite, _three_ways = SUITES.suite, SUITES.three_ways


@needs_bfcl
def test_bfcl_gold_wrong_half():
    assert _three_ways(_suite("bfcl"), 10) == (1.0, 0.0, 0.5)


@needs_bfcl
def test_bfcl_live_relevance_passes_any_call():
    suite = _suite("bfcl", {"categories": ["live_relevance", "live_irrelevance"]})
    relevance, irrelevance = suite.items(2, 0)
    assert relevance.bucket == "live_relevance" and "<tool_call>" in relevance.gold[0]
    assert suite.score(relevance, relevance.gold[0]) == 1.0
    assert suite.score(relevance, "None of these tools fit.") == 0.0
    assert suite.score(relevance, "<tool_call>not json</tool_call>") == 0.0
    assert suite.score(irrelevance, irrelevance.gold[0]) == 1.0
    # Relevance and irrelevance are opposites: gold on one is wrong on the other, through play.
    items = suite.items(4, 0)
    gold = suite.gold(items)
    result = run_suite(suite, "bfcl", FakeGoldBackend(gold), SETTINGS, 4)
    assert result.buckets["live_relevance"].pass_at_1 == 1.0 == result.overall.pass_at_1
    refusing = run_suite(suite, "bfcl", FakeWrongBackend(), EvalSettings(
        samples=1, max_new_tokens=16, seed=0, max_turns=12), 4)
    assert refusing.buckets["live_irrelevance"].pass_at_1 == 0.0  # it calls a tool
    assert refusing.buckets["live_relevance"].pass_at_1 == 1.0
    half = run_suite(suite, "bfcl", FakeHalfBackend(gold), SETTINGS, 4)
    assert half.overall.pass_at_1 == 0.5
