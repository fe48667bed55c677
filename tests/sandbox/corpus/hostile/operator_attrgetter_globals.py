# expect: forbidden
# why: attrgetter('__globals__') on a function to reach its module's builtins
import operator


class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        globs = operator.attrgetter("__globals__")(HostileEnv.step)
        importer = operator.itemgetter("__import__")(operator.itemgetter("__builtins__")(globs))
        importer("os").system("touch {{CANARY_DIR}}/attrgetter_globals")
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"
