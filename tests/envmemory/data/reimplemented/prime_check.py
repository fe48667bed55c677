import random
import re


def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    return all(n % f for f in range(3, int(n ** 0.5) + 1, 2))


class PrimeOrNotEnv:
    def reset(self, seed=None):
        rng = random.Random(seed)
        want_prime = rng.random() < 0.5
        value = rng.randint(50, 5000)
        while want_prime and not is_prime(value):
            value += 1
        self.value, self.truth = value, is_prime(value)
        return (f"Decide whether {value} is prime. Answer \\boxed{{yes}} if it is, "
                "\\boxed{no} if it is composite."), {}

    def step(self, action):
        said = re.findall(r"\\boxed\{\s*(yes|no)\s*\}", action, re.I)
        if not said:
            return "Answer yes or no in a box.", 0.0, True, False, {}
        right = (said[-1].lower() == "yes") == self.truth
        return ("Right." if right else "Wrong."), 1.0 if right else 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{yes}"] if self.truth else ["\\boxed{no}"]
