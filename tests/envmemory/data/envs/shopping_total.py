import random
import re

ITEMS = {"bread": 3, "milk": 2, "cheese": 7, "apples": 4, "coffee": 9, "rice": 5, "eggs": 3}


class ShoppingTotalEnv:
    def __init__(self):
        self.cart = {}
        self.discount = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        chosen = rng.sample(sorted(ITEMS), rng.randint(2, 5))
        self.cart = {name: rng.randint(1, 4) for name in chosen}
        self.discount = rng.choice([0, 10, 20, 25])
        listing = ", ".join(f"{qty} x {name} at ${ITEMS[name]} each" for name, qty in
                            self.cart.items())
        return (f"A shopper buys {listing}. The store gives {self.discount}% off the whole "
                "purchase. How much does the shopper pay, rounded down to whole dollars? "
                "Answer \\boxed{amount}."), {}

    def _total(self):
        gross = sum(ITEMS[name] * qty for name, qty in self.cart.items())
        return gross * (100 - self.discount) // 100

    def step(self, action):
        match = re.search(r"\\boxed\{\$?(\d+)\}", action)
        if match and int(match.group(1)) == self._total():
            return "Correct amount paid.", 1.0, True, False, {}
        return "Incorrect amount.", 0.0, True, False, {}

    def solution(self):
        return [f"\\boxed{{{self._total()}}}"]
