# expect: forbidden
# why: gi_frame reached through getattr
class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        gen = (i for i in range(3))
        frame = getattr(gen, "gi_" + "frame")
        getattr(frame, "f_" + "globals")["__builtins__"]
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

