# expect: forbidden
# why: type() builds a class whose annotation names dataclasses pastes into exec'd source
from dataclasses import dataclass


class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        Evil = type("Evil", (), {"__annotations__": {"x=__import__('os').system('touch {{CANARY_DIR}}/dc')": int}})
        dataclass(Evil)
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

