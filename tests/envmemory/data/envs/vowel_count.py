import random
import re

SENTENCES = [
    "the quick brown fox jumps over the lazy dog",
    "a journey of a thousand miles begins with a single step",
    "all that glitters is not gold",
    "knowledge is power and power is responsibility",
    "time and tide wait for no one",
    "an apple a day keeps the doctor away",
]


class VowelCountEnv:
    def __init__(self):
        self.sentence = ""

    def reset(self, seed=None):
        rng = random.Random(seed)
        words = rng.choice(SENTENCES).split()
        rng.shuffle(words)
        self.sentence = " ".join(words[: rng.randint(4, len(words))])
        prompt = (f'How many vowels (a, e, i, o, u) does the text "{self.sentence}" contain? '
                  "Count every occurrence and answer with \\boxed{count}.")
        return prompt, {}

    def _count(self):
        return sum(1 for ch in self.sentence if ch in "aeiou")

    def step(self, action):
        match = re.search(r"\\boxed\{(\d+)\}", action)
        if not match:
            return "Answer must be a boxed number.", 0.0, True, False, {}
        correct = int(match.group(1)) == self._count()
        message = "Correct vowel count." if correct else "Incorrect vowel count."
        return message, 1.0 if correct else 0.0, True, False, {}

    def solution(self):
        return [f"\\boxed{{{self._count()}}}"]
