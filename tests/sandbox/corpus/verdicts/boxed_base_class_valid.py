# expect: ok
class BaseGameEnv:
    """A base class whose name also ends in Env: the most derived class is the environment."""

    def reset(self, seed=None):
        self.turn = 0
        return self.intro(), {}

    def intro(self):
        return "base"


class ParityEnv(BaseGameEnv):
    def intro(self):
        return "Is 7 odd? Answer \\boxed{yes} or \\boxed{no}."

    def step(self, action):
        self.turn += 1
        ok = action.strip() == "\\boxed{yes}"
        return ("right" if ok else "wrong"), float(ok), True, False, {}

    def solution(self):
        return "\\boxed{yes}"
