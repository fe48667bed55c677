"""A gymnasium-style environment using gymnasium.Env and spaces."""

import gymnasium as gym
from gymnasium import spaces


class CounterEnv(gym.Env):
    """Count up to a target; actions are \\boxed{inc} or \\boxed{dec}."""

    def __init__(self):
        super().__init__()
        self.action_space = spaces.Discrete(2)
        self.observation_space = spaces.Text(max_length=200)
        self._value = 0
        self._target = 3

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self._value = 0
        self._target = int(self.np_random.integers(2, 5))
        return f"Reach {self._target} from 0 with \\boxed{{inc}}/\\boxed{{dec}}.", {}

    def step(self, action):
        if "inc" in action:
            self._value += 1
        elif "dec" in action:
            self._value -= 1
        done = self._value == self._target
        return f"value={self._value}", float(done), done, abs(self._value) > 10, {}

    def solution(self):
        return ["\\boxed{inc}"] * self._target
