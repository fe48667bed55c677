"""A reasoning-gym program whose solution() hands the scorer's eval() a payload that kills its
own worker; validation replays it. Guarded: the answer is not a literal, it scores 0."""
# expect: unsolvable


class HostileStringInsertionEnv(ReasoningGymEnv):
    dataset = "string_insertion"

    def solution(self):
        return "\\boxed{__import__('os').kill(__import__('os').getpid(), 9) or ['x']}"
