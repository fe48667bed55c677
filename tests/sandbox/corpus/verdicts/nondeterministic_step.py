# expect: nondeterministic
import random


class NoisyEnv:
    def reset(self, seed=None):
        self._rng = random.Random(seed)
        return "Say go.", {}

    def step(self, action):
        noise = random.random()  # the global generator, not the seeded one
        return f"noise {noise}", 1.0 if action == "go" else 0.0, True, False, {}

    def solution(self):
        return "go"
