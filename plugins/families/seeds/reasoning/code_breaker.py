"""Logic, multi-turn, SPADE game format: break a hidden four-digit code from exact/misplaced
feedback (Mastermind), with \\boxed{guess} actions and partial-progress rewards."""

import random
import re
from typing import Tuple


class CodeBreakerEnv:
    def __init__(self, max_turns=10, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.secret = ""
        self.history = []
        self.reset()

    def reset(self, seed=None) -> Tuple[str, dict]:
        if seed is not None:
            random.seed(seed)
        self.turn_count = 0
        self.history = []
        self.secret = "".join(random.choice("123456") for _ in range(4))
        return (f"A secret code of 4 digits, each from 1 to 6 (repeats allowed), is hidden.\n"
                f"Guess it with \\boxed{{dddd}}. After each guess you learn how many digits are "
                f"right and in the right place (exact) and how many are right but misplaced.\n"
                f"Turn 0/{self.max_turns}", {})

    def feedback(self, guess):
        exact = sum(1 for g, s in zip(guess, self.secret) if g == s)
        common = sum(min(guess.count(d), self.secret.count(d)) for d in "123456")
        return exact, common - exact

    def solution(self):
        return [self.secret]

    def step(self, action: str) -> Tuple[str, float, bool, bool, dict]:
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        match = re.search(r'\\boxed\{([^}]*)\}', action)
        if not match:
            return ("Use \\boxed{dddd} format, e.g. \\boxed{1234}.", 0.0, False, truncated, {})
        guess = match.group(1).strip().replace(" ", "")
        if not re.fullmatch(r"[1-6]{4}", guess):
            return (f"'{guess}' is not 4 digits from 1 to 6. Turn {self.turn_count}/"
                    f"{self.max_turns}", 0.0, False, truncated, {})
        exact, misplaced = self.feedback(guess)
        self.history.append(f"{guess}: {exact} exact, {misplaced} misplaced")
        if exact == 4:
            return (f"Cracked it in {self.turn_count} guesses!", 1.0, True, False, {})
        progress = exact / 4.0 * 0.5
        if truncated:
            return (f"Out of guesses. The code was {self.secret}.", progress, False, True, {})
        log = "\n".join(self.history[-6:])
        return (f"{log}\nTurn {self.turn_count}/{self.max_turns}. Guess again with "
                f"\\boxed{{dddd}}.", progress, False, False, {})

    def close(self):
        pass
