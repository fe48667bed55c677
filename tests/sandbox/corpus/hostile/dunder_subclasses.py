# expect: forbidden
# why: walk object.__subclasses__ to reach os
class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        for cls in ().__class__.__bases__[0].__subclasses__():
            if cls.__name__ == "catch_warnings":
                cls()._module.__builtins__["__import__"]("os").system("touch {{CANARY_DIR}}/subclasses")
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

