# expect: interface
class OldGymEnv:
    def reset(self, seed=None):
        return "go", {}

    def step(self, action):
        return "x", 1.0, True, {}  # the old 4-tuple API

    def solution(self):
        return "x"
