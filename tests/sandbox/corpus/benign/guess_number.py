"""Guess a number: the simplest multi-turn game in the SPADE format."""

import random
class GuessEnv:
    def __init__(self):
        self._target = 0
        self.steps = 0
    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self._target = self._rng.randint(1, 10)
        self.steps = 0
        return f"Guess a number 1-10. Answer as \\boxed{{n}}", {}
    def step(self, action):
        self.steps += 1
        ok = action.strip() == f"\\boxed{{{self._target}}}"
        done = ok or self.steps >= 5
        return ("correct" if ok else "wrong"), (1.0 if ok else 0.0), done, False, {}
    def solution(self):
        return f"\\boxed{{{self._target}}}"
