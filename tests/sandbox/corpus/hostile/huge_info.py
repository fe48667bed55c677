# expect: output_limit
# why: a 10 MB info dict
class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0

        return "Say go.", {}

    def step(self, action):
        self.steps += 1
        return "ok", 0.0, False, False, {"blob": "y" * 10 ** 7}
        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

