"""A reasoning-gym program whose solution() hands sympy's parse_expr (countdown's scorer) a
payload that kills its own worker. Guarded: the formula is refused, it scores below 1."""
# expect: unsolvable


class HostileCountdownEnv(ReasoningGymEnv):
    dataset = "countdown"

    def solution(self):
        return "\\boxed{__import__('os').kill(__import__('os').getpid(), 9)}"
