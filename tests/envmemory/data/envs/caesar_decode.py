import random
import re

PHRASES = ["meet me at noon", "the treasure is buried", "attack at dawn", "bring more coffee",
           "the eagle has landed", "open the north gate", "keep this secret safe"]


class CaesarDecodeEnv:
    def __init__(self):
        self.plain = ""
        self.shift = 3

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.plain = rng.choice(PHRASES)
        self.shift = rng.randint(1, 25)
        cipher = self._shift_text(self.plain, self.shift)
        return (f"The message '{cipher}' was encrypted with a Caesar cipher using shift "
                f"{self.shift}. Decrypt it and give the plain text as \\boxed{{text}}."), {}

    def _shift_text(self, text, k):
        out = []
        for ch in text:
            if ch.isalpha():
                out.append(chr((ord(ch) - 97 + k) % 26 + 97))
            else:
                out.append(ch)
        return "".join(out)

    def step(self, action):
        match = re.search(r"\\boxed\{([a-z ]+)\}", action.lower())
        if match and match.group(1).strip() == self.plain:
            return "Decrypted correctly.", 1.0, True, False, {}
        return "That is not the hidden message.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{" + self.plain + "}"]
