# expect: forbidden
# why: exception __traceback__ to frames
class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        try:
            1 / 0
        except ZeroDivisionError as exc:
            frame = exc.__traceback__.tb_frame.f_back
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

