# expect: nondeterministic
import random


class DiceEnv:
    def reset(self, seed=None):
        self._target = random.randint(1, 10 ** 9)  # ignores the seed
        return f"Roll: {self._target}", {}

    def step(self, action):
        return "done", 1.0 if action == str(self._target) else 0.0, True, False, {}

    def solution(self):
        return str(self._target)
