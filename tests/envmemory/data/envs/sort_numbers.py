import random
import re


class SortNumbersEnv:
    def __init__(self):
        self.values = []

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.values = [rng.randint(-50, 50) for _ in range(rng.randint(5, 10))]
        listing = ", ".join(str(v) for v in self.values)
        return (f"Sort these integers in ascending order: {listing}. Write them comma separated "
                "inside \\boxed{...}."), {"count": len(self.values)}

    def _parse(self, action):
        match = re.search(r"\\boxed\{([^}]*)\}", action)
        if not match:
            return None
        try:
            return [int(x) for x in match.group(1).split(",")]
        except ValueError:
            return None

    def step(self, action):
        answer = self._parse(action)
        if answer == sorted(self.values):
            return "Sorted correctly.", 1.0, True, False, {}
        if answer is not None and sorted(answer) == sorted(self.values):
            return "Right numbers, wrong order.", 0.2, True, False, {}
        return "Not a sorted version of the list.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{" + ", ".join(str(v) for v in sorted(self.values)) + "}"]
