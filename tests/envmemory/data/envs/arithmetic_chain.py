import random
import re


class ArithmeticChainEnv:
    def __init__(self):
        self.expression = ""
        self.value = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        terms = [str(rng.randint(2, 20)) for _ in range(rng.randint(3, 6))]
        ops = [rng.choice(["+", "-", "*"]) for _ in range(len(terms) - 1)]
        parts = [terms[0]]
        for op, term in zip(ops, terms[1:]):
            parts += [op, term]
        self.expression = " ".join(parts)
        self.value = self._evaluate(self.expression)
        return (f"Evaluate the arithmetic expression {self.expression} using the usual operator "
                "precedence. Put the integer result in \\boxed{}."), {}

    def _evaluate(self, text):
        tokens = text.split()
        total, product, sign = 0, int(tokens[0]), 1
        for op, num in zip(tokens[1::2], tokens[2::2]):
            if op == "*":
                product *= int(num)
            else:
                total += sign * product
                sign, product = (1 if op == "+" else -1), int(num)
        return total + sign * product

    def step(self, action):
        match = re.search(r"\\boxed\{(-?\d+)\}", action)
        if match and int(match.group(1)) == self.value:
            return "Correct result.", 1.0, True, False, {}
        return "Wrong or missing result.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{%d}" % self.value]
