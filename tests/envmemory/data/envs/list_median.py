import random
import re


class ListMedianEnv:
    def __init__(self):
        self.data = []

    def reset(self, seed=None):
        rng = random.Random(seed)
        size = rng.choice([5, 7, 9, 11])
        self.data = [rng.randint(0, 200) for _ in range(size)]
        shown = " ".join(map(str, self.data))
        message = (f"Here is a list of {size} measurements: {shown}. What is their median value? "
                   "Respond with \\boxed{median}.")
        return message, {}

    def _median(self):
        ordered = sorted(self.data)
        return ordered[len(ordered) // 2]

    def step(self, action):
        match = re.search(r"\\boxed\{(-?\d+)\}", action)
        if match and int(match.group(1)) == self._median():
            return "Correct median.", 1.0, True, False, {}
        if match and int(match.group(1)) == round(sum(self.data) / len(self.data)):
            return "That is the mean, not the median.", 0.0, True, False, {}
        return "Incorrect median.", 0.0, True, False, {}

    def solution(self):
        return [f"\\boxed{{{self._median()}}}"]
