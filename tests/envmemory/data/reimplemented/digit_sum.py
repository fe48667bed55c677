import random


class AddDigitsEnv:
    def reset(self, seed=None):
        r = random.Random(seed)
        digits = [r.randint(1, 9)] + [r.randint(0, 9) for _ in range(r.randint(3, 5))]
        self.n = int("".join(map(str, digits)))
        self.total = 0
        for ch in str(self.n):
            self.total += ord(ch) - ord("0")
        return (f"Take the integer {self.n} and add up its digits one by one. "
                f"What do you get? Put the result in \\boxed{{}}."), {"n": self.n}

    def step(self, action):
        start = action.rfind("\\boxed{")
        end = action.find("}", start)
        if start < 0 or end < 0:
            return "Missing \\boxed{} answer.", 0.0, True, False, {}
        text = action[start + 7:end].strip()
        ok = text.isdigit() and int(text) == self.total
        return ("Correct." if ok else f"No, the digit sum is not {text}."), float(ok), True, False, {}

    def solution(self):
        return ["\\boxed{" + str(self.total) + "}"]
