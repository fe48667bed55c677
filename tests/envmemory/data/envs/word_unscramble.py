import random
import re

WORDS = ["planet", "garden", "silver", "window", "bridge", "candle", "forest", "pocket",
         "rocket", "summer", "marble", "copper", "harbor", "jungle", "pepper", "violin"]


class WordUnscrambleEnv:
    def __init__(self):
        self.word = ""
        self.scrambled = ""
        self.tries = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.word = rng.choice(WORDS)
        letters = list(self.word)
        while "".join(letters) == self.word:
            rng.shuffle(letters)
        self.scrambled = "".join(letters)
        self.tries = 0
        return (f"Unscramble the letters '{self.scrambled}' to form a common English word. "
                "You have three tries. Reply with \\boxed{word}."), {"length": len(self.word)}

    def step(self, action):
        self.tries += 1
        match = re.search(r"\\boxed\{([a-zA-Z]+)\}", action)
        guess = match.group(1).lower() if match else ""
        if guess == self.word:
            return "Yes, you found the hidden word.", 1.0, True, False, {}
        if self.tries >= 3:
            return f"No more tries; the word was {self.word}.", 0.0, True, False, {}
        return "That is not the word, try again.", 0.0, False, False, {}

    def solution(self):
        return ["\\boxed{" + self.word + "}"]
