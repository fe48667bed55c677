# expect: runtime_error
# why: enum.global_enum writes into a module namespace; not exposed
import enum


class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        enum.global_enum(enum.Enum("Evil", {"_print": 1}))
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

