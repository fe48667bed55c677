import random
import re


class DigitSumEnv:
    def __init__(self):
        self.number = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.number = rng.randint(1000, 999999)
        text = (f"Compute the sum of the decimal digits of {self.number}. "
                "Give only the final sum in the form \\boxed{answer}.")
        return text, {}

    def _answer(self):
        return sum(int(d) for d in str(self.number))

    def _read(self, action):
        found = re.findall(r"\\boxed\{\s*(-?\d+)\s*\}", action)
        return int(found[-1]) if found else None

    def step(self, action):
        value = self._read(action)
        if value is None:
            return "No boxed integer found in your reply.", 0.0, True, False, {}
        if value == self._answer():
            return "That digit sum is right.", 1.0, True, False, {}
        return "That digit sum is wrong.", 0.0, True, False, {"expected": self._answer()}

    def solution(self):
        return ["\\boxed{%d}" % self._answer()]
