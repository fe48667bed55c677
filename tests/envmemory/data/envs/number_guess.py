import random
import re


class NumberGuessEnv:
    def __init__(self):
        self.target = None
        self.attempts = 0
        self.max_attempts = 8

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.target = rng.randint(1, 100)
        self.attempts = 0
        prompt = ("I am thinking of a whole number between 1 and 100. Guess it; after each guess "
                  "I will tell you whether the secret is higher or lower. Answer as \\boxed{n}.")
        return prompt, {"max_attempts": self.max_attempts}

    def _parse(self, action):
        match = re.search(r"\\boxed\{(-?\d+)\}", action)
        return int(match.group(1)) if match else None

    def step(self, action):
        guess = self._parse(action)
        self.attempts += 1
        if guess is None:
            return "Please answer with a number inside \\boxed{}.", -0.1, False, False, {}
        if guess == self.target:
            return "Correct, that is the secret number!", 1.0, True, False, {}
        if self.attempts >= self.max_attempts:
            return "Out of attempts.", 0.0, True, False, {}
        hint = "higher" if guess < self.target else "lower"
        return f"Wrong. The secret number is {hint}.", 0.0, False, False, {}

    def solution(self):
        return [f"\\boxed{{{self.target}}}"]
