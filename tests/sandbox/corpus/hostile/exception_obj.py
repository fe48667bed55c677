# expect: forbidden
# why: AttributeError.obj (a 7.3-era leak)
class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        try:
            (1).nothing_here
        except AttributeError as exc:
            held = exc.obj
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

