import random
import re

PRIMES = [101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157]


class ModularInverseEnv:
    def __init__(self):
        self.a = 1
        self.m = 101

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.m = rng.choice(PRIMES)
        self.a = rng.randint(2, self.m - 1)
        question = (f"Find the multiplicative inverse of {self.a} modulo {self.m}, that is the "
                    f"integer x with 0 <= x < {self.m} and {self.a} * x = 1 (mod {self.m}). "
                    "Reply \\boxed{x}.")
        return question, {"modulus": self.m}

    def step(self, action):
        match = re.search(r"\\boxed\{(\d+)\}", action)
        if match is None:
            return "Reply with \\boxed{x}.", 0.0, True, False, {}
        x = int(match.group(1))
        if 0 <= x < self.m and (self.a * x) % self.m == 1:
            return "Correct inverse.", 1.0, True, False, {}
        return "That is not the inverse.", 0.0, True, False, {}

    def _inverse(self):
        return pow(self.a, -1, self.m)

    def solution(self):
        return [f"\\boxed{{{self._inverse()}}}"]
