# expect: interface
class NumberEnv:
    def reset(self, seed=None):
        return "Say 3.", {}

    def step(self, action):
        return "x", float(action == "3"), True, False, {}

    def solution(self):
        return 3
