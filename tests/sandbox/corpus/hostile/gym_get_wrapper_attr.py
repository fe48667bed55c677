# expect: forbidden
# why: gymnasium.Env.get_wrapper_attr is a bare getattr
import gymnasium


class HostileEnv:
    def __init__(self):
        self.steps = 0

    def reset(self, seed=None):
        self.steps = 0
        glob = gymnasium.Env.get_wrapper_attr(len, "__self__")
        return "Say go.", {}

    def step(self, action):
        self.steps += 1

        won = action == "go"
        return "ok", (1.0 if won else 0.0), won or self.steps >= 3, False, {}

    def solution(self):
        return "go"

