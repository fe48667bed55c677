# expect: runtime_error
# why: a str subclass whose split() yields a dunder, passed to attrgetter
import operator


class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        class Name(str):
            def split(self, sep=None):
                return ["__class__"]
        operator.attrgetter(Name("steps"))(self)
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"
