"""A reasoning-gym program that calls the trusted step() itself from reset() with a payload for
the scorer's eval(). Guarded: the payload scores 0 and reset goes on; the solution still works."""
# expect: ok


class SelfSteppingSpiralEnv(ReasoningGymEnv):
    dataset = "spiral_matrix"

    def reset(self, seed=None):
        observation, info = super().reset(seed)
        super().step("\\boxed{__import__('os').kill(__import__('os').getpid(), 9) or [1]}")
        observation, info = super().reset(seed)
        return observation, info
