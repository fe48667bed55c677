# expect: unsolvable
class LockEnv:
    def reset(self, seed=None):
        self._code = str((seed or 0) * 7 % 1000)
        return "Enter the code as \\boxed{code}.", {}

    def step(self, action):
        ok = action == "\\boxed{" + self._code + "}"
        return ("open" if ok else "locked"), float(ok), True, False, {}

    def solution(self):
        return "\\boxed{" + self._code + "0}"  # off by a digit
