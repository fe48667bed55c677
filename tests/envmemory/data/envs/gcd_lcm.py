import math
import random
import re


class GcdLcmEnv:
    def __init__(self):
        self.a = 1
        self.b = 1

    def reset(self, seed=None):
        rng = random.Random(seed)
        base = rng.randint(2, 30)
        self.a = base * rng.randint(2, 40)
        self.b = base * rng.randint(2, 40)
        return (f"Compute the greatest common divisor and the least common multiple of {self.a} "
                f"and {self.b}. Reply as \\boxed{{gcd, lcm}}."), {}

    def _answer(self):
        g = math.gcd(self.a, self.b)
        return g, self.a * self.b // g

    def step(self, action):
        match = re.search(r"\\boxed\{\s*(\d+)\s*,\s*(\d+)\s*\}", action)
        if not match:
            return "Use the format \\boxed{gcd, lcm}.", 0.0, True, False, {}
        got = (int(match.group(1)), int(match.group(2)))
        g, l = self._answer()
        reward = 0.5 * (got[0] == g) + 0.5 * (got[1] == l)
        return f"Score {reward}.", reward, True, False, {}

    def solution(self):
        g, l = self._answer()
        return [f"\\boxed{{{g}, {l}}}"]
