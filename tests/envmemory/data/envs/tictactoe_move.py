import random
import re

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


class TicTacToeMoveEnv:
    def __init__(self):
        self.board = [" "] * 9
        self.win_cell = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        line = rng.choice(LINES)
        self.board = [" "] * 9
        self.win_cell = rng.choice(line)
        for cell in line:
            if cell != self.win_cell:
                self.board[cell] = "X"
        free = [i for i in range(9) if self.board[i] == " " and i != self.win_cell]
        for cell in rng.sample(free, 2):
            self.board[cell] = "O"
        return ("You play X in tic-tac-toe. Cells are numbered 0-8 row by row.\n"
                + self._show() + "\nWhich cell wins the game immediately? Reply \\boxed{cell}."), {}

    def _show(self):
        return "\n".join("|".join(self.board[r * 3:r * 3 + 3]) for r in range(3))

    def _wins(self, cell):
        board = list(self.board)
        board[cell] = "X"
        return any(all(board[i] == "X" for i in line) for line in LINES)

    def step(self, action):
        match = re.search(r"\\boxed\{([0-8])\}", action)
        cell = int(match.group(1)) if match else -1
        if cell >= 0 and self.board[cell] == " " and self._wins(cell):
            return "Three in a row, you win!", 1.0, True, False, {}
        return "That move does not win.", 0.0, True, False, {}

    def solution(self):
        return [f"\\boxed{{{self.win_cell}}}"]
