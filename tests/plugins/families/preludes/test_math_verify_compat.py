"""The stand-in for ``math_verify`` (``parse`` and ``verify`` on the project's answer helpers),
in this process and as programs get it in the sandbox when the real package is not preloaded."""

from __future__ import annotations

import pytest

from plugins.families.preludes import math_verify_compat

from fakes.math_verify_probe import probe_math_verify


def test_math_verify_stand_in():
    assert math_verify_compat.parse("the answer is \\boxed{1/2}") == ["1/2"]
    assert math_verify_compat.parse(None) == []
    assert math_verify_compat.verify(math_verify_compat.parse("0.5"),
                                     math_verify_compat.parse("1/2"))
    assert not math_verify_compat.verify("2", "3")


@pytest.mark.timeout(180)
def test_the_stand_in_answers_when_math_verify_is_not_preloaded(fresh_sandbox):
    from plugins.families.reasoning import ReasoningFamily

    class WithoutMathVerify(ReasoningFamily):
        preload_imports = ()

    report = probe_math_verify(fresh_sandbox, WithoutMathVerify())
    assert report["backend"] == "stand-in"
    assert report["judged"][0:4] == [True, True, True, False]
    assert report["judged"][-1] is True
