# expect: interface
class SilentEnv:
    def reset(self, seed=None):
        return "   ", {}

    def step(self, action):
        return "x", 1.0, True, False, {}

    def solution(self):
        return "x"
