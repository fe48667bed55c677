"""A reasoning program that reports which ``math_verify`` its sandbox gives programs (the real
package or the project's stand-in) and how it judges a few pairs; for the tests of both preludes."""

from __future__ import annotations

import json

from spade_core.validation import validate

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


def probe_math_verify(sandbox, family) -> dict:
    """How ``math_verify`` judged the probe's pairs in ``sandbox`` under ``family``."""
    [verdict] = validate(sandbox, [MATH_VERIFY_PROBE], family=family)
    assert verdict.valid, (verdict.category, verdict.message)
    text = verdict.observation
    return json.JSONDecoder().raw_decode(text[text.index("{"):])[0]
