import random
import re


class OrderListEnv:
    def reset(self, seed=None):
        rnd = random.Random(seed)
        self.nums = rnd.sample(range(-50, 51), rnd.randint(5, 10))
        return ("Put the following numbers in increasing order and answer with the sorted list, "
                f"comma-separated, in \\boxed{{}}: {' '.join(map(str, self.nums))}"), {}

    def step(self, action):
        m = re.search(r"\\boxed\{(.*?)\}", action, re.S)
        try:
            got = [int(t) for t in re.split(r"[,\s]+", m.group(1).strip())] if m else []
        except ValueError:
            got = []
        expected = sorted(self.nums)
        if got == expected:
            return "Correct ordering.", 1.0, True, False, {}
        partial = sum(a == b for a, b in zip(got, expected)) / len(expected)
        return "Not sorted correctly.", round(0.5 * partial, 2), True, False, {}

    def solution(self):
        return ["\\boxed{" + ",".join(str(x) for x in sorted(self.nums)) + "}"]
