"""Tic-tac-toe against a fixed opponent: inheritance, super(), try/except, comprehensions, lambdas."""

import random
from typing import List, Optional


class BoardGameEnv:
    def __init__(self, size: int):
        self.size = size
        self.cells: List[str] = []

    def render(self) -> str:
        rows = [" ".join(self.cells[r * self.size:(r + 1) * self.size]) for r in range(self.size)]
        return "\n".join(rows)


class TicTacToeEnv(BoardGameEnv):
    LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]

    def __init__(self):
        super().__init__(3)
        self._rng = random.Random(0)
        self.moves = 0

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self.cells = ["."] * 9
        self.moves = 0
        return "You are X. Play \\boxed{cell 0-8}.\n" + self.render(), {}

    def _winner(self) -> Optional[str]:
        for a, b, c in self.LINES:
            if self.cells[a] != "." and self.cells[a] == self.cells[b] == self.cells[c]:
                return self.cells[a]
        return None

    def step(self, action):
        self.moves += 1
        try:
            cell = int(action.strip().replace("\\boxed{", "").replace("}", ""))
            if self.cells[cell] != ".":
                raise ValueError("occupied")
        except (ValueError, IndexError):
            return "Illegal move.\n" + self.render(), 0.0, self.moves >= 9, False, {}
        self.cells[cell] = "X"
        if self._winner() == "X":
            return "You win!\n" + self.render(), 1.0, True, False, {}
        free = [i for i, v in enumerate(self.cells) if v == "."]
        if not free:
            return "Draw.\n" + self.render(), 0.5, True, False, {}
        pick = min(free, key=lambda i: (i in (0, 1, 2), i))
        self.cells[pick] = "O"
        if self._winner() == "O":
            return "You lose.\n" + self.render(), 0.0, True, False, {}
        return self.render(), 0.0, False, False, {"free": len(free) - 1}

    def solution(self):
        # The opponent always fills the lowest free cell outside the top row first.
        return ["\\boxed{0}", "\\boxed{1}", "\\boxed{2}"]
