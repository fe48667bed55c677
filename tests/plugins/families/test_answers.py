"""Answer extraction and equivalence (plugins/families/answers.py) and the math_verify stand-in."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from plugins.families.answers import (answers_match, extract_all_boxed, extract_boxed,
                                      normalize_answer, parse_number, verify_answer)
from plugins.families.base import exported_names, read_source
from plugins.families.preludes import math_verify_compat


@pytest.mark.parametrize("text,expected", [
    ("so \\boxed{42}.", "42"),
    ("\\boxed{1} then \\boxed{2}", "2"),
    ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
    ("\\boxed{x^{2}+1}", "x^{2}+1"),
    ("\\boxed 7 apples", "7"),
    ("\\fbox{yes}", "yes"),
    ("\\boxed{{28}}", "{28}"),
    ("no box here", None),
    ("\\boxed{unclosed", None),
])
def test_extract_boxed(text, expected):
    assert extract_boxed(text) == expected


def test_extract_all_boxed_keeps_order_and_tolerates_non_strings():
    assert extract_all_boxed("\\boxed{a} x \\boxed{b}") == ["a", "b"]
    assert extract_all_boxed(None) == []


@pytest.mark.parametrize("raw,normal", [
    ("$\\text{Paris}$.", "paris"),
    ("x = 5", "5"),
    ("\\left( 1, 2 \\right)", "( 1, 2 )"),
    ("90^\\circ", "90"),
    ("{{7}}", "7"),
    ("\u22123", "-3"),
])
def test_normalize_answer(raw, normal):
    assert normalize_answer(raw) == normal


@pytest.mark.parametrize("raw,value", [
    ("42", Fraction(42)), ("-0.25", Fraction(-1, 4)), ("1,234,567", Fraction(1234567)),
    ("3/4", Fraction(3, 4)), ("-\\frac{3}{4}", Fraction(-3, 4)), ("\\dfrac{10}{4}", Fraction(5, 2)),
    ("1.5e3", Fraction(1500)), ("12.5%", Fraction(1, 8)), ("1/0", None), ("abc", None),
    ("1e999999", None),
])
def test_parse_number(raw, value):
    assert parse_number(raw) == value


@pytest.mark.parametrize("given,expected", [
    ("\\boxed{\\frac{1}{2}}", "0.5"), ("50%", "0.5"), ("1,234", "1234"), ("0.50", "1/2"),
    ("2(x+1)", "2x+2"), ("x^2-1", "(x-1)(x+1)"), ("\\frac{\\sqrt{2}}{2}", "1/\\sqrt{2}"),
    ("\\sqrt[3]{8}", "2"), ("e^{i\\pi}", "-1"), ("5!", "120"), ("sin(x)^2+cos(x)^2", "1"),
    ("(1, 2]", "(1,2]"), ("\\{1,2,3\\}", "\\{3, 2, 1\\}"), ("y = 2x+1", "y=1+2x"),
    ("Paris", "paris."), ("\\text{yes}", "Yes"), ("10^{400}", "10^400"), ("3", 3),
    ("2\\cdot 3", "6"), ("\\pi/2", "1.5707963267948966"),
])
def test_equivalent_answers_match(given, expected):
    assert answers_match(given, expected)


@pytest.mark.parametrize("given,expected", [
    ("3", "4"), ("1/3", "0.3333"), ("x^2+1", "(x+1)^2"), ("[1,2]", "(1,2)"), ("abc", "cab"),
    ("x", "y"), ("", ""), (None, "1"), ("1, 2", "1, 2, 3"), ("\\{1,2\\}", "\\{1,3\\}"),
    ("2^10^10^10", "1"), ("no", "yes"), ("10!", "3628801"),
])
def test_different_answers_do_not_match(given, expected):
    assert not answers_match(given, expected)


def test_hostile_inputs_finish_quickly():
    started = time.monotonic()
    hostile = ["9^9^9^9^9", "(" * 5000 + "1" + ")" * 5000, "1" * 10000, "170!!!!",
               "\\frac{" * 300, "x^" * 2000 + "2", "10^(10^(10^10))"]
    for text in hostile:
        answers_match(text, "1")
        answers_match("1", text)
    assert time.monotonic() - started < 5.0


def test_verify_answer_prefers_exact_text():
    assert verify_answer(" 7 ", "7") and verify_answer("14/2", "7") and not verify_answer("8", "7")


def test_math_verify_stand_in():
    assert math_verify_compat.parse("the answer is \\boxed{1/2}") == ["1/2"]
    assert math_verify_compat.parse(None) == []
    assert math_verify_compat.verify(math_verify_compat.parse("0.5"), math_verify_compat.parse("1/2"))
    assert not math_verify_compat.verify("2", "3")


def test_prelude_exports_what_it_documents():
    names = exported_names(read_source("answers.py"))
    assert set(names) == {"extract_boxed", "extract_all_boxed", "extract_choice", "normalize_answer",
                          "parse_number", "answers_match", "verify_answer"}
    namespace: dict = {"__name__": "__prelude__"}
    exec(compile(read_source("answers.py"), "<prelude>", "exec"), namespace)  # noqa: S102
    assert all(callable(namespace[n]) for n in names)


#: A reasoning program that reports how ``math_verify`` judges a few pairs (in its observation).
MATH_VERIFY_PROBE = r'''
import json
from math_verify import BACKEND, parse, verify

PAIRS = [("\\frac{1}{2}", "0.5"), ("$\\frac{1}{2}$", "\\boxed{0.5}"), ("$x^2+2x+1$", "$(x+1)^2$"),
         ("\\boxed{3}", "\\boxed{4}"), ("$\\{1, 2\\}$", "$\\{2, 1\\}$"),
         ("$[0, 1)$", "$[0, 1]$")]


class ProbeEnv:
    def reset(self, seed=None):
        judged = [verify(parse(gold), parse(given)) for gold, given in PAIRS]
        judged.append(verify("1/2", "0.5"))
        shown = [str(item) for item in parse("\\boxed{\\frac{1}{2}}")]
        return "Say " + json.dumps({"backend": BACKEND, "judged": judged, "shown": shown}) + \
            " then \\boxed{go}.", {}

    def step(self, action):
        won = "\\boxed{go}" in action
        return "ok", (1.0 if won else 0.0), True, False, {}

    def solution(self):
        return "\\boxed{go}"
'''


@pytest.fixture
def process_sandbox():
    """A fresh sandbox: a fork server keeps what any family preloaded for later programs."""
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    box = build_sandbox(ProcessSandboxOptions(workers=1, load_seconds=20, step_seconds=10,
                                              episode_seconds=30, memory_mb=1024))
    yield box
    box.close()


def _probe(sandbox, family) -> dict:
    import json

    from spade_core.validation import validate

    [verdict] = validate(sandbox, [MATH_VERIFY_PROBE], family=family)
    assert verdict.valid, (verdict.category, verdict.message)
    text = verdict.observation
    return json.JSONDecoder().raw_decode(text[text.index("{"):])[0]


@pytest.mark.timeout(180)
def test_real_math_verify_scores_answers_in_the_sandbox(process_sandbox):
    pytest.importorskip("math_verify")
    from plugins.families.reasoning import ReasoningFamily

    family = ReasoningFamily()
    assert family.preload_imports == ("math_verify",)
    report = _probe(process_sandbox, family)
    assert report["backend"] == "math-verify"
    # 1/2 = 0.5 however written; expressions and sets (order-free) by math-verify; a half-open
    # interval is not the closed one; a wrong answer stays wrong.
    assert report["judged"] == [True, True, True, False, True, False, True]
    assert report["shown"] and all(isinstance(s, str) for s in report["shown"])


@pytest.mark.timeout(180)
def test_the_stand_in_answers_when_math_verify_is_not_preloaded(process_sandbox):
    from plugins.families.reasoning import ReasoningFamily

    class WithoutMathVerify(ReasoningFamily):
        preload_imports = ()

    report = _probe(process_sandbox, WithoutMathVerify())
    assert report["backend"] == "stand-in"
    assert report["judged"][0:4] == [True, True, True, False]
    assert report["judged"][-1] is True
