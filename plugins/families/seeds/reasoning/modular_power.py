"""Math, single turn: the remainder of a large power plus an offset, answered in \\boxed{}."""

import random


class ModularPowerEnv:
    """Compute (a^b + c) mod m for numbers too large to expand by hand; fast exponentiation by
    repeated squaring is the intended route."""

    def __init__(self, max_turns=3, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.a = self.b = self.c = self.m = 0
        self.answer = 0
        self.reset()

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.turn_count = 0
        self.a = rng.randint(12, 97)
        self.b = rng.randint(40, 400)
        self.c = rng.randint(1, 50)
        self.m = rng.choice([101, 103, 107, 109, 113, 127, 131, 137, 139, 149])
        self.answer = (pow(self.a, self.b, self.m) + self.c) % self.m
        return self.task(), {}

    def task(self):
        return (f"Compute ({self.a}^{self.b} + {self.c}) mod {self.m}.\n"
                "Give the remainder, an integer between 0 and "
                f"{self.m - 1}, as \\boxed{{remainder}}.")

    def solution(self):
        return str(self.answer)

    def step(self, action):
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        given = extract_boxed(action)
        if given is None:
            return ("Answer with \\boxed{remainder}.\n" + self.task(), 0.0, False, truncated, {})
        if answers_match(given, self.answer):
            return "Correct!", 1.0, True, False, {}
        if truncated:
            return (f"Wrong. The remainder was {self.answer}.", 0.0, False, True, {})
        return (f"{given} is not the remainder. Check the exponent by repeated squaring.\n"
                + self.task(), 0.0, False, False, {})

    def close(self):
        pass
