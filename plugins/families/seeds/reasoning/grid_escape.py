"""Cognition (spatial planning), multi-turn: walk a walled grid to the exit with \\boxed{move}
actions before the step budget runs out; a key must be collected first."""

import random

MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


class GridEscapeEnv:
    """The map is shown every turn. Reward 1.0 when the exit is reached holding the key."""

    def __init__(self, max_turns=30, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.size = 6
        self.walls = set()
        self.pos = self.key = self.exit = (0, 0)
        self.has_key = False
        self.reset()

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.turn_count = 0
        self.has_key = False
        cells = [(r, c) for r in range(self.size) for c in range(self.size)]
        while True:
            self.walls = set(rng.sample(cells, 9))
            free = [cell for cell in cells if cell not in self.walls]
            self.pos, self.key, self.exit = rng.sample(free, 3)
            to_key = self.route(self.pos, self.key)
            to_exit = self.route(self.key, self.exit)
            if to_key is not None and to_exit is not None and 4 <= len(to_key) + len(to_exit) <= 18:
                break
        return self.render("Find the key (K), then reach the exit (E)."), {}

    def route(self, source, target):
        """Moves of a shortest path from source to target avoiding walls, or None."""
        previous = {source: None}
        frontier = [source]
        while frontier:
            nxt = []
            for cell in frontier:
                if cell == target:
                    path = []
                    while previous[cell] is not None:
                        cell, move = previous[cell]
                        path.append(move)
                    return path[::-1]
                for name, (dr, dc) in MOVES.items():
                    r, c = cell[0] + dr, cell[1] + dc
                    if 0 <= r < self.size and 0 <= c < self.size and (r, c) not in self.walls \
                            and (r, c) not in previous:
                        previous[(r, c)] = (cell, name)
                        nxt.append((r, c))
            frontier = nxt
        return None

    def render(self, message):
        rows = []
        for r in range(self.size):
            row = ""
            for c in range(self.size):
                cell = (r, c)
                if cell == self.pos:
                    row += "@"
                elif cell in self.walls:
                    row += "#"
                elif cell == self.key and not self.has_key:
                    row += "K"
                elif cell == self.exit:
                    row += "E"
                else:
                    row += "."
            rows.append(row)
        return (f"{message}\n" + "\n".join(rows)
                + f"\nYou are @. Key: {'held' if self.has_key else 'not held'}. "
                  f"Step {self.turn_count}/{self.max_turns}.\n"
                  "Actions: \\boxed{up}, \\boxed{down}, \\boxed{left}, \\boxed{right}")

    def solution(self):
        moves = self.route(self.pos, self.key) if not self.has_key else []
        start = self.key if not self.has_key else self.pos
        moves = moves + self.route(start, self.exit)
        return [f"\\boxed{{{m}}}" for m in moves]

    def step(self, action):
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        move = extract_boxed(action)
        move = move.strip().lower() if move is not None else ""
        if move not in MOVES:
            return (self.render("Unknown move; use up, down, left or right in \\boxed{}."),
                    0.0, False, truncated, {})
        dr, dc = MOVES[move]
        r, c = self.pos[0] + dr, self.pos[1] + dc
        if not (0 <= r < self.size and 0 <= c < self.size) or (r, c) in self.walls:
            message = "You bump into a wall."
        else:
            self.pos = (r, c)
            message = f"You move {move}."
            if self.pos == self.key and not self.has_key:
                self.has_key = True
                message += " You pick up the key."
        if self.pos == self.exit and self.has_key:
            return f"{message} You unlock the exit and escape!", 1.0, True, False, {}
        if self.pos == self.exit:
            message += " The exit is locked: you need the key."
        progress = 0.3 if self.has_key else 0.0
        return self.render(message), progress, False, truncated, {}

    def close(self):
        pass
