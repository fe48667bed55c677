# expect: forbidden
# why: operator.attrgetter('__class__') to start a walk to object's subclasses
import operator


class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        klass = operator.attrgetter("__class__")(())
        base = operator.attrgetter("__base__")(klass)
        operator.attrgetter("__subclasses__")(base)()
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"
