import random
import re


class PrimeCheckEnv:
    def __init__(self):
        self.n = 2

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.n = rng.randint(50, 5000)
        if rng.random() < 0.5:
            while not self._is_prime(self.n):
                self.n += 1
        return (f"Is {self.n} a prime number? Answer \\boxed{{yes}} or \\boxed{{no}}."), {}

    def _is_prime(self, k):
        if k < 2:
            return False
        d = 2
        while d * d <= k:
            if k % d == 0:
                return False
            d += 1
        return True

    def step(self, action):
        match = re.search(r"\\boxed\{(yes|no)\}", action.lower())
        expected = "yes" if self._is_prime(self.n) else "no"
        if match and match.group(1) == expected:
            return "Correct.", 1.0, True, False, {}
        return "Incorrect.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{yes}" if self._is_prime(self.n) else "\\boxed{no}"]
