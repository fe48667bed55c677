import random
import re


class JumbledWordEnv:
    VOCAB = ("planet garden silver window bridge candle forest pocket rocket summer marble copper "
             "harbor jungle pepper violin").split()

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.secret = self.VOCAB[rng.randrange(len(self.VOCAB))]
        jumble = self.secret
        while jumble == self.secret:
            jumble = "".join(rng.sample(self.secret, len(self.secret)))
        self.remaining = 3
        return (f"Anagram puzzle: rearrange '{jumble}' into a real English word. "
                f"You may answer up to 3 times, each as \\boxed{{word}}."), {}

    def step(self, action):
        self.remaining -= 1
        found = re.findall(r"\\boxed\{(\w+)\}", action)
        if found and found[-1].lower() == self.secret:
            return "Solved the anagram.", 1.0, True, False, {}
        done = self.remaining == 0
        msg = f"Wrong. The answer was {self.secret}." if done else "Wrong, guess again."
        return msg, 0.0, done, False, {"remaining": self.remaining}

    def solution(self):
        return [f"\\boxed{{{self.secret}}}"]
