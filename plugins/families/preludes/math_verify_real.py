"""The real ``math-verify`` package (``pip install math-verify==0.9.0``) behind the names SPADE
game programs import (``from math_verify import parse, verify``), when the sandbox's fork server
preloaded it (``ReasoningFamily.preload_imports``); otherwise the stand-in defined above it stays.

Trusted module source, appended to ``math_verify_compat.py``. What programs get is kept small:
``parse`` returns opaque :class:`ParsedAnswer` items (never sympy objects, whose public methods
reach ``sympify``); ``verify`` returns a bool. Both run with math-verify's own timeouts off,
because those use ``signal.alarm``, which would replace and then cancel the sandbox's step timer;
the sandbox's time and CPU limits bound them instead.
"""

import sys as _sys

# The worker registers this module as ``math_verify``, so the preloaded package is reached
# through its submodules, which stay in ``sys.modules`` under their own names.
_real_parser = _sys.modules.get("math_verify.parser")
_real_grader = _sys.modules.get("math_verify.grader")

#: Which implementation answers: ``"math-verify"`` (the real package) or ``"stand-in"``.
BACKEND = "math-verify" if _real_parser is not None and _real_grader is not None else "stand-in"


class ParsedAnswer:
    """One candidate that ``parse`` found; only ``verify`` looks inside."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value

    def __repr__(self):
        return str(self._value)

    __str__ = __repr__


def _unwrap(answer):
    if isinstance(answer, ParsedAnswer):
        return [answer._value]
    if isinstance(answer, (list, tuple)):
        values = []
        for item in answer:
            values.extend(_unwrap(item))
        return values
    return [item._value for item in _real_parse(answer)]


def _real_parse(text, *args, **kwargs):
    """The answer candidates in ``text``, as math-verify finds them (LaTeX, ``\\boxed{}``,
    plain expressions); an unparsable input gives ``[]``."""
    if text is None:
        return []
    try:
        found = _real_parser.parse(str(text), parsing_timeout=None)
    except Exception:  # noqa: BLE001 - math-verify's own failures mean "nothing parsed"
        return []
    return [ParsedAnswer(value) for value in found]


def _real_verify(gold, target, *args, **kwargs):
    """Whether any candidate of ``target`` equals any candidate of ``gold``, by math-verify's
    grader (numbers, fractions, expressions, sets, intervals, equations). Strings are parsed
    first, as the stand-in does."""
    try:
        return bool(_real_grader.verify(_unwrap(gold), _unwrap(target), timeout_seconds=None))
    except Exception:  # noqa: BLE001 - a grader failure is a mismatch, as math-verify reports it
        return False


if BACKEND == "math-verify":
    parse = _real_parse
    verify = _real_verify

__all__ = ["parse", "verify", "BACKEND"]
