"""A stand-in for the ``math_verify`` package with the two names SPADE game programs import
(``from math_verify import parse, verify``), built on this project's answer helpers.

Trusted module source: the sandbox makes it importable as ``math_verify`` for reasoning programs,
so released SPADE games run unchanged without the real package (which needs sympy: the optional
extra ``spade-rl[math]``). When that package is installed, ``math_verify_real.py``, appended after
this file, replaces ``parse`` and ``verify``; this stand-in is the fallback. ``parse`` keeps the
text; ``verify`` compares by numeric and symbolic equivalence.
"""

if "answers_match" not in globals():  # imported as a module rather than run after the helpers
    from plugins.families.answers import answers_match, extract_boxed

__all__ = ["parse", "verify"]


def parse(text, *args, **kwargs):
    """The answer candidates in ``text``: the last ``\\boxed{}`` content if any, else the text.
    Returns a list like ``math_verify.parse`` does; an unparsable input gives ``[]``."""
    if text is None:
        return []
    text = str(text)
    boxed = extract_boxed(text)
    candidate = boxed if boxed is not None else text.strip()
    return [candidate] if candidate else []


def verify(gold, target, *args, **kwargs):
    """Whether any parsed ``target`` equals any parsed ``gold`` (numbers exactly, expressions
    by evaluation at random points)."""
    golds = gold if isinstance(gold, list) else parse(gold)
    targets = target if isinstance(target, list) else parse(target)
    return any(answers_match(t, g) for g in golds for t in targets)
