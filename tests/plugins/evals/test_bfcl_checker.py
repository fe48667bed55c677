"""BFCL's AST checker as the bfcl suite's scorer (in a sandbox worker): a call is needed, the
right function, all of a parallel set in any order; irrelevance passes on no call."""

from __future__ import annotations

from fakes.eval_runs import needs_bfcl, SUITES

_suite, _three_ways = SUITES.suite, SUITES.three_ways


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
