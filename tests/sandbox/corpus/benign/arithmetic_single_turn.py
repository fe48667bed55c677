"""Single-turn reasoning problem using fractions, decimal, statistics, math and textwrap."""

import math
import statistics
import textwrap
from decimal import Decimal, getcontext
from fractions import Fraction


class FractionSumEnv:
    def __init__(self):
        self._answer = None
        getcontext().prec = 28

    def reset(self, seed=None):
        seed = 0 if seed is None else seed
        a, b = Fraction(seed % 7 + 1, 3), Fraction(seed % 5 + 2, 4)
        self._answer = a + b
        mean = statistics.mean([a.numerator, b.numerator])
        text = textwrap.fill(
            f"Compute {a} + {b} as a reduced fraction p/q (mean numerator {mean}, "
            f"gcd check {math.gcd(6, 4)}, decimal {Decimal(1) / Decimal(8)}). Answer \\boxed{{p/q}}.",
            width=70)
        return text, {"difficulty": "easy"}

    def step(self, action):
        text = action.strip()
        if text.startswith("\\boxed{") and text.endswith("}"):
            try:
                value = Fraction(text[7:-1])
            except (ValueError, ZeroDivisionError):
                value = None
        else:
            value = None
        correct = value == self._answer
        return ("Correct." if correct else "Incorrect."), float(correct), True, False, {}

    def solution(self):
        return f"\\boxed{{{self._answer}}}"


if __name__ == "__main__":
    env = FractionSumEnv()
    print(env.reset(1))
