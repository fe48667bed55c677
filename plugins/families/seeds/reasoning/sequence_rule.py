"""Cognition, single turn: infer the hidden rule of a number sequence and give the next term."""

import random


class SequenceRuleEnv:
    """Sequences from one of several rule families (second differences, alternating steps,
    multiply-then-add, interleaved sequences); the rule is never stated."""

    def __init__(self, max_turns=2, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.terms = []
        self.next_term = 0
        self.reset()

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.turn_count = 0
        family = rng.choice(["quadratic", "alternating", "affine", "interleaved"])
        terms = []
        if family == "quadratic":
            a, b, c = rng.randint(1, 4), rng.randint(-5, 9), rng.randint(-10, 10)
            terms = [a * n * n + b * n + c for n in range(8)]
        elif family == "alternating":
            x, p, q = rng.randint(-20, 20), rng.randint(3, 15), -rng.randint(1, 9)
            terms = [x]
            for n in range(7):
                terms.append(terms[-1] + (p if n % 2 == 0 else q))
        elif family == "affine":
            x, k, d = rng.randint(1, 6), rng.choice([2, 3, -2]), rng.randint(-4, 5)
            terms = [x]
            for _ in range(7):
                terms.append(terms[-1] * k + d)
        else:
            a0, da, b0, rb = rng.randint(1, 30), rng.randint(2, 9), rng.randint(1, 4), rng.choice([2, 3])
            for n in range(8):
                terms.append(a0 + da * (n // 2) if n % 2 == 0 else b0 * rb ** (n // 2))
        self.terms = terms[:7]
        self.next_term = terms[7]
        return self.task(), {}

    def task(self):
        shown = ", ".join(str(t) for t in self.terms)
        return f"What number comes next?\n{shown}, ?\nAnswer as \\boxed{{number}}."

    def solution(self):
        return str(self.next_term)

    def step(self, action):
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        given = extract_boxed(action)
        if given is None:
            return "Answer with \\boxed{number}.\n" + self.task(), 0.0, False, truncated, {}
        if answers_match(given, self.next_term):
            return "Correct!", 1.0, True, False, {}
        if truncated:
            return f"Wrong. The next term was {self.next_term}.", 0.0, False, True, {}
        return ("No. Look at the differences between terms, and at odd and even positions "
                "separately.\n" + self.task(), 0.0, False, False, {})

    def close(self):
        pass
