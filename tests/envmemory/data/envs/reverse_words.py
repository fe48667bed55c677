import random
import re

VOCAB = ["river", "stone", "cloud", "light", "paper", "music", "green", "table", "ocean", "tiger",
         "apple", "chair", "dream", "smile", "honey", "storm"]


class ReverseWordsEnv:
    def __init__(self):
        self.words = []

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.words = rng.sample(VOCAB, rng.randint(3, 7))
        return (f"Reverse the order of the words in: \"{' '.join(self.words)}\". Keep each word "
                "spelled as it is and reply with \\boxed{reversed sentence}."), {}

    def _target(self):
        return " ".join(reversed(self.words))

    def step(self, action):
        match = re.search(r"\\boxed\{([^}]*)\}", action)
        reply = " ".join(match.group(1).split()) if match else ""
        if reply == self._target():
            return "Words reversed correctly.", 1.0, True, False, {}
        if sorted(reply.split()) == sorted(self.words):
            return "Right words, wrong order.", 0.3, True, False, {}
        return "Incorrect.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{" + self._target() + "}"]
