import random
import string


class ShiftCipherEnv:
    MESSAGES = ["meet me at noon", "the treasure is buried", "attack at dawn", "bring more coffee",
                "the eagle has landed", "open the north gate", "keep this secret safe"]

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.answer = rng.choice(self.MESSAGES)
        self.k = rng.randint(1, 25)
        letters = string.ascii_lowercase
        table = str.maketrans(letters, letters[self.k:] + letters[:self.k])
        encoded = self.answer.translate(table)
        return ("Decode this Caesar-shifted text. Every letter was moved forward by "
                f"{self.k} places in the alphabet: '{encoded}'. Give the original text as "
                "\\boxed{...}."), {"shift": self.k}

    def step(self, action):
        i = action.find("\\boxed{")
        j = action.find("}", i)
        guess = action[i + 7:j].strip().lower() if i >= 0 and j > i else ""
        if guess == self.answer:
            return "Message decoded.", 1.0, True, False, {}
        return "Decoding is wrong.", 0.0, True, False, {}

    def solution(self):
        return ["\\boxed{%s}" % self.answer]
