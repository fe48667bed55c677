import random
import re

MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


class MazeWalkEnv:
    def __init__(self):
        self.size = 5
        self.walls = set()
        self.pos = (0, 0)
        self.steps = 0

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.size = rng.randint(4, 7)
        cells = [(r, c) for r in range(self.size) for c in range(self.size)]
        self.walls = {cell for cell in cells if rng.random() < 0.2 and cell not in self._path()}
        self.pos = (0, 0)
        self.steps = 0
        return self._render() + ("\nWalk from S to the exit E at the bottom-right. Move one cell "
                                 "per turn with \\boxed{up}, \\boxed{down}, \\boxed{left} or "
                                 "\\boxed{right}; # is a wall."), {}

    def _path(self):
        return [(0, c) for c in range(self.size)] + [(r, self.size - 1) for r in range(self.size)]

    def _render(self):
        rows = []
        for r in range(self.size):
            row = ""
            for c in range(self.size):
                if (r, c) == self.pos:
                    row += "S"
                elif (r, c) == (self.size - 1, self.size - 1):
                    row += "E"
                else:
                    row += "#" if (r, c) in self.walls else "."
            rows.append(row)
        return "\n".join(rows)

    def step(self, action):
        self.steps += 1
        match = re.search(r"\\boxed\{(up|down|left|right)\}", action)
        if match:
            dr, dc = MOVES[match.group(1)]
            nxt = (self.pos[0] + dr, self.pos[1] + dc)
            if 0 <= nxt[0] < self.size and 0 <= nxt[1] < self.size and nxt not in self.walls:
                self.pos = nxt
        if self.pos == (self.size - 1, self.size - 1):
            return "You reached the exit!", 1.0, True, False, {}
        if self.steps >= 4 * self.size:
            return "Too many moves.", 0.0, False, True, {}
        return self._render(), 0.0, False, False, {}

    def solution(self):
        return ["\\boxed{right}"] * (self.size - 1) + ["\\boxed{down}"] * (self.size - 1)
