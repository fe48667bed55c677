import random
import re


class BankBalanceEnv:
    def __init__(self):
        self.start = 0
        self.events = []

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.start = rng.randint(100, 1000)
        self.events = []
        for _ in range(rng.randint(3, 7)):
            kind = rng.choice(["deposit", "withdrawal", "fee"])
            amount = rng.randint(5, 150) if kind != "fee" else rng.randint(1, 10)
            self.events.append((kind, amount))
        lines = "\n".join(f"- {kind} of ${amount}" for kind, amount in self.events)
        return (f"An account opens with ${self.start}. Then these transactions happen in order:\n"
                f"{lines}\nWhat is the final balance in dollars? Answer \\boxed{{balance}}."), {}

    def _balance(self):
        total = self.start
        for kind, amount in self.events:
            total += amount if kind == "deposit" else -amount
        return total

    def step(self, action):
        match = re.search(r"\\boxed\{\$?(-?\d+)\}", action)
        ok = bool(match) and int(match.group(1)) == self._balance()
        return ("Balance is correct." if ok else "Balance is wrong."), float(ok), True, False, {}

    def solution(self):
        return ["\\boxed{%d}" % self._balance()]
