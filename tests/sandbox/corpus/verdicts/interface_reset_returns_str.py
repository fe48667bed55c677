# expect: interface
class BareEnv:
    def reset(self, seed=None):
        return "just an observation"

    def step(self, action):
        return "x", 0.0, True, False, {}

    def solution(self):
        return "x"
