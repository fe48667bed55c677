# expect: forbidden
# why: TypedDict annotations with code as names, then dataclass
from typing import TypedDict
from dataclasses import dataclass


class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        Evil = TypedDict("Evil", {"x=__import__('os').system('touch {{CANARY_DIR}}/td')": int})
        dataclass(Evil)
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

