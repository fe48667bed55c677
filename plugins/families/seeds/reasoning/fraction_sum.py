"""Math, single turn, in the exact SPADE game format: a sum of fractions in lowest terms."""

import random
import re
from typing import Tuple

from math_verify import parse, verify


def verify_answer(player_answer, solution):
    """Check if answer is correct: string match first, then math equivalence."""
    if str(player_answer).strip() == str(solution).strip():
        return True
    try:
        return verify(parse(player_answer), parse(solution))
    except Exception:
        return False


def gcd(a, b):
    while b:
        a, b = b, a % b
    return abs(a)


class FractionSumEnv:
    def __init__(self, max_turns=4, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.terms = []
        self._solution = "0"
        self.reset()

    def reset(self, seed=None) -> Tuple[str, dict]:
        if seed is not None:
            random.seed(seed)
        self.turn_count = 0
        self.terms = []
        for _ in range(4):
            den = random.randint(2, 15)
            num = random.randint(1, den * 2)
            sign = random.choice([1, 1, -1])
            self.terms.append((sign * num, den))
        num, den = 0, 1
        for n, d in self.terms:
            num, den = num * d + n * den, den * d
            g = gcd(num, den)
            num, den = num // g, den // g
        self._solution = str(num) if den == 1 else f"{num}/{den}"
        return self._task(), {}

    def _task(self):
        parts = []
        for k, (n, d) in enumerate(self.terms):
            if k == 0:
                parts.append(f"{n}/{d}")
            else:
                parts.append(("- " if n < 0 else "+ ") + f"{abs(n)}/{d}")
        return ("Add the fractions and give the result in lowest terms as \\boxed{p/q} "
                "(or an integer):\n" + " ".join(parts))

    def solution(self) -> str:
        return self._solution

    def step(self, action: str) -> Tuple[str, float, bool, bool, dict]:
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        match = re.search(r'\\boxed\{([^}]+)\}', action)
        if match and verify_answer(match.group(1), self.solution()):
            return ("Correct! The sum is " + self._solution + ".", 1.0, True, False, {})
        elif truncated:
            return (f"Time's up. The answer was {self.solution()}.", 0.0, False, True, {})
        elif not match:
            return ("Put your answer in \\boxed{}. " + self._task(), 0.0, False, False, {})
        return ("Wrong. Use a common denominator, then reduce. " + self._task(),
                0.0, False, False, {})

    def close(self):
        pass
