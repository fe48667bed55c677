# expect: forbidden
# why: private attribute of a library object
class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        import random
        gen = random.Random(1)
        gen._randbelow(5)
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

