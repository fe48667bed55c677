import random
import re


class SecretNumberEnv:
    """Higher/lower guessing game."""

    LOW, HIGH, BUDGET = 1, 100, 8

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self._secret = self._rng.randrange(self.LOW, self.HIGH + 1)
        self._left = self.BUDGET
        obs = (f"Find my hidden number. It lies in [{self.LOW}, {self.HIGH}]. You get "
               f"{self.BUDGET} guesses and feedback 'too low' or 'too high'. Format: \\boxed{{guess}}")
        return obs, {"budget": self.BUDGET}

    def step(self, action):
        m = re.findall(r"\\boxed\{\s*(\d+)\s*\}", action)
        self._left -= 1
        if not m:
            return "Unreadable guess.", -0.1, self._left <= 0, False, {}
        g = int(m[-1])
        if g == self._secret:
            return "Got it!", 1.0, True, False, {}
        feedback = "too low" if g < self._secret else "too high"
        return f"{g} is {feedback}.", 0.0, self._left <= 0, False, {"left": self._left}

    def solution(self):
        lo, hi, actions = self.LOW, self.HIGH, []
        while True:
            mid = (lo + hi) // 2
            actions.append(f"\\boxed{{{mid}}}")
            if mid == self._secret:
                return actions
            if mid < self._secret:
                lo = mid + 1
            else:
                hi = mid - 1
