"""The benchmark environment the sandbox benchmarks run (``sandbox_bench.py``, and
``ray_bench.py`` for ``--sandbox ray``): a 10-step hot/cold search, typical of generated games."""

from __future__ import annotations

#: The benchmark environment: a 10-step hot/cold search, typical of generated games.
BENCH_PROGRAM = r'''
import random


class HotColdEnv:
    """Find the hidden cell on a line; each step says warmer or colder."""

    def __init__(self):
        self._target = 0
        self._last = None
        self.steps = 0

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self._target = self._rng.randint(0, 99)
        self._last = None
        self.steps = 0
        return "A cell between 0 and 99 is hidden. Answer as \\boxed{n}.", {"max_steps": 10}

    def step(self, action):
        self.steps += 1
        text = action.strip()
        guess = None
        if text.startswith("\\boxed{") and text.endswith("}"):
            try:
                guess = int(text[7:-1])
            except ValueError:
                guess = None
        if guess is None:
            obs, reward = "Answer as \\boxed{n}.", 0.0
        elif guess == self._target:
            obs, reward = "Found it!", 1.0
        else:
            distance = abs(guess - self._target)
            warmer = self._last is not None and distance < self._last
            self._last = distance
            obs, reward = f"{'warmer' if warmer else 'colder'} ({self.steps}/10)", 0.0
        done = reward == 1.0 or self.steps >= 10
        return obs, reward, done, False, {"steps": self.steps}

    def solution(self):
        return f"\\boxed{{{self._target}}}"
'''
EPISODE_STEPS = 10
ACTIONS = [f"\\boxed{{{i}}}" for i in range(200, 200 + EPISODE_STEPS)]  # never the answer


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
