"""Word puzzle using collections, heapq, itertools, functools, re, string and a module-level seed."""

import collections
import functools
import heapq
import itertools
import random
import re
import string

random.seed(7)
ALPHABET = string.ascii_lowercase


@functools.lru_cache(maxsize=None)
def letter_score(word):
    return sum(ALPHABET.index(ch) + 1 for ch in word)


class AnagramEnv:
    """Unscramble the word; partial credit for correct letters in place."""

    WORDS = ["planet", "garden", "silver", "castle", "bridge", "forest"]

    def __init__(self):
        self._word = ""
        self._tries = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        self._word = rng.choice(self.WORDS)
        letters = list(self._word)
        rng.shuffle(letters)
        self._tries = 0
        counts = collections.Counter(letters)
        top = heapq.nlargest(2, counts.items(), key=lambda kv: (kv[1], kv[0]))
        pairs = list(itertools.islice(itertools.combinations(sorted(set(letters)), 2), 3))
        hint = f"score {letter_score(self._word)}, frequent {top}, pairs {len(pairs)}"
        return f"Unscramble: {''.join(letters)} ({hint}). Answer \\boxed{{word}}.", {}

    def step(self, action):
        self._tries += 1
        match = re.search(r"\\boxed\{([a-z]+)\}", action)
        guess = match.group(1) if match else ""
        if guess == self._word:
            return "Correct!", 1.0, True, False, {}
        same = sum(1 for a, b in zip(guess, self._word) if a == b)
        partial = same / len(self._word) * 0.5
        done = self._tries >= 4
        return f"{same} letters in place.", partial if done else 0.0, done, False, {}

    def solution(self):
        return "\\boxed{" + self._word + "}"
