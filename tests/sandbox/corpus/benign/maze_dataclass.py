"""Grid maze with dataclasses, enums, typing and augmented assignment on attributes and items."""

from dataclasses import dataclass, field
from enum import Enum
from typing import Dict, List, Optional, Tuple
import random


class Move(Enum):
    UP = (-1, 0)
    DOWN = (1, 0)
    LEFT = (0, -1)
    RIGHT = (0, 1)


@dataclass
class Position:
    row: int
    col: int

    def moved(self, move: Move) -> "Position":
        dr, dc = move.value
        return Position(self.row + dr, self.col + dc)


@dataclass
class State:
    player: Position
    goal: Position
    visits: Dict[Tuple[int, int], int] = field(default_factory=dict)
    steps: int = 0


class MazeEnv:
    SIZE = 5

    def __init__(self):
        self._state: Optional[State] = None
        self._max_steps = 40

    def reset(self, seed=None):
        rng = random.Random(seed)
        goal = Position(rng.randrange(1, self.SIZE), rng.randrange(1, self.SIZE))
        self._state = State(player=Position(0, 0), goal=goal)
        self._state.visits[(0, 0)] = 1
        return self._render("Reach G. Moves: \\boxed{up|down|left|right}."), {"size": self.SIZE}

    def _render(self, header: str) -> str:
        rows: List[str] = []
        for r in range(self.SIZE):
            line = ""
            for c in range(self.SIZE):
                if (r, c) == (self._state.player.row, self._state.player.col):
                    line += "P"
                elif (r, c) == (self._state.goal.row, self._state.goal.col):
                    line += "G"
                else:
                    line += "."
            rows.append(line)
        return header + "\n" + "\n".join(rows)

    def step(self, action: str):
        self._state.steps += 1
        name = action.strip().removeprefix("\\boxed{").removesuffix("}").upper()
        try:
            move = Move[name]
        except KeyError:
            return "Unknown move.", 0.0, False, self._state.steps >= self._max_steps, {}
        nxt = self._state.player.moved(move)
        if 0 <= nxt.row < self.SIZE and 0 <= nxt.col < self.SIZE:
            self._state.player = nxt
            key = (nxt.row, nxt.col)
            self._state.visits[key] = self._state.visits.get(key, 0) + 1
            self._state.visits[key] += 0
        won = self._state.player == self._state.goal
        reward = 1.0 if won else 0.0
        return self._render(f"Step {self._state.steps}."), reward, won, \
            self._state.steps >= self._max_steps, {"visits": len(self._state.visits)}

    def solution(self):
        moves = ["\\boxed{down}"] * self._state.goal.row + ["\\boxed{right}"] * self._state.goal.col
        return moves
