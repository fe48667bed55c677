# expect: trivial
class FreeWinEnv:
    def reset(self, seed=None):
        return "Say anything.", {}

    def step(self, action):
        return "You win.", 1.0, True, False, {}

    def solution(self):
        return "anything"
