import random
import re


class NimGameEnv:
    def __init__(self):
        self.stones = 0
        self.max_take = 3

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.max_take = rng.randint(2, 4)
        self.stones = rng.randint(10, 30)
        while self.stones % (self.max_take + 1) == 0:
            self.stones += 1
        intro = (f"Nim: there are {self.stones} stones. On each turn a player removes between 1 "
                 f"and {self.max_take} stones; whoever takes the last stone wins. You move first. "
                 "Say how many stones you take with \\boxed{k}.")
        return intro, {"stones": self.stones}

    def _opponent(self):
        take = self.stones % (self.max_take + 1) or 1
        self.stones -= min(take, self.stones)

    def step(self, action):
        match = re.search(r"\\boxed\{(\d+)\}", action)
        take = int(match.group(1)) if match else 0
        if not 1 <= take <= min(self.max_take, self.stones):
            return "Illegal move, you lose.", -1.0, True, False, {}
        self.stones -= take
        if self.stones == 0:
            return "You took the last stone and win!", 1.0, True, False, {}
        self._opponent()
        if self.stones == 0:
            return "The opponent took the last stone. You lose.", 0.0, True, False, {}
        return f"Opponent moved. {self.stones} stones remain.", 0.0, False, False, {}

    def solution(self):
        moves, stones = [], self.stones
        while stones > 0:
            take = stones % (self.max_take + 1)
            moves.append(f"\\boxed{{{take}}}")
            stones -= take
            if stones:
                stones -= 1
        return moves
