"""The real ``math-verify`` package behind the names programs import, when the sandbox's fork
server preloaded it: what it judges equal, and that programs get only strings and bools."""

from __future__ import annotations

import pytest

from fakes.math_verify_probe import probe_math_verify


@pytest.mark.timeout(180)
def test_real_math_verify_scores_answers_in_the_sandbox(fresh_sandbox):
    pytest.importorskip("math_verify")
    from plugins.families.reasoning import ReasoningFamily

    family = ReasoningFamily()
    assert family.preload_imports == ("math_verify",)
    report = probe_math_verify(fresh_sandbox, family)
    assert report["backend"] == "math-verify"
    # 1/2 = 0.5 however written; expressions and sets (order-free) by math-verify; a half-open
    # interval is not the closed one; a wrong answer stays wrong.
    assert report["judged"] == [True, True, True, False, True, False, True]
    assert report["shown"] and all(isinstance(s, str) for s in report["shown"])
