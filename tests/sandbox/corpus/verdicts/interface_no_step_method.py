# expect: interface
class HalfEnv:
    def reset(self, seed=None):
        return "I cannot step.", {}

    def solution(self):
        return "x"
