# expect: endless
class ForeverEnv:
    def reset(self, seed=None):
        self.n = 0
        return "Keep going.", {}

    def step(self, action):
        self.n += 1
        return f"step {self.n}", 0.0, False, False, {}

    def solution(self):
        return ["go"] * 5
