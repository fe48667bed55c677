"""The lab's environments as real programs (run in the sandbox like any designed environment).

Each program is one class whose constants say its cell (skill, difficulty, kind) and a nonce;
``reset(seed)`` draws two large numbers and asks for their sum; ``step`` reads the last
``\\boxed{...}`` of the reply. Kinds:

- ``ordinary``: the observation shows both numbers; a right sum pays 1.
- ``leaky``: the numbers are hidden, so the sum cannot be worked out, but ``info["hint"]`` gives
  it away as a sum of two other numbers (no literal answer for the hint redaction to find).
- ``noisy``: any answer within 100 of the sum pays 1 or 0 by a coin fixed by the seed and the
  nonce, whatever its correctness; junk answers pay 0.

Host code only formats and parses these texts; nothing here evaluates model text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plugins.lab.learner import Cell

TEMPLATE = '''
class LabEnv:
    """Lab environment: skill {skill}, difficulty {difficulty}, kind {kind}."""

    TITLE = "Lab environment: skill {skill}, difficulty {difficulty}, kind {kind}"
    SKILL = {skill}
    DIFFICULTY = {difficulty!r}
    KIND = {kind!r}
    NONCE = {nonce}

    def _draw(self, seed):
        x = (int(seed) * 1103515245 + self.NONCE * 2654435761 + 12345) % 2147483648
        a = 100000 + x % 800000
        x = (x * 1103515245 + 12345) % 2147483648
        b = 100000 + x % 800000
        x = (x * 1103515245 + 12345) % 2147483648
        return a, b, (x // 65536) % 2

    def reset(self, seed=None):
        # A leaky environment hides the same numbers whatever the seed, so the hint of the first
        # seed's instance gives the answer away on every seed.
        seed = 0 if seed is None or self.KIND == "leaky" else seed
        self.a, self.b, self.coin = self._draw(seed)
        head = ("Lab task " + str(self.NONCE) + ": skill " + str(self.SKILL) + ", difficulty "
                + str(self.DIFFICULTY) + ", kind " + self.KIND + ". ")
        if self.KIND == "leaky":
            split = (self.a + self.b) // 3
            return (head + "Give the hidden sum in \\\\boxed{{}}.",
                    {{"hint": "It is " + str(split) + " + " + str(self.a + self.b - split) + "."}})
        return head + "Compute " + str(self.a) + " + " + str(self.b) + " in \\\\boxed{{}}.", {{}}

    def _answer(self, action):
        start = action.rfind("\\\\boxed{{")
        if start < 0:
            return None
        end = action.find("}}", start)
        text = action[start + 7:end].strip() if end > start else ""
        if not text.isdigit() or len(text) > 12:
            return None
        return int(text)

    def step(self, action):
        answer = self._answer(str(action))
        truth = self.a + self.b
        if self.KIND == "noisy":
            won = answer is not None and abs(answer - truth) <= 100 and self.coin == 1
        else:
            won = answer == truth
        return ("right" if won else "wrong"), (1.0 if won else 0.0), True, False, {{}}

    def solution(self):
        return "\\\\boxed{{" + str(self.a + self.b) + "}}"
'''

_CELL = re.compile(r"^\s*SKILL = (\d+)\s*$.*?^\s*DIFFICULTY = (-?[\d.]+)\s*$.*?"
                   r"^\s*KIND = '(\w+)'\s*$.*?^\s*NONCE = (\d+)\s*$", re.M | re.S)
_TASK = re.compile(r"Lab task (\d+): skill (\d+), difficulty (-?[\d.]+), kind (\w+)\.")
_SUM = re.compile(r"Compute (\d+) \+ (\d+)")
_HINT_SUM = re.compile(r"It is (\d+) \+ (\d+)\.")


def program(cell: Cell, nonce: int) -> str:
    """The source of the environment for ``cell``; ``nonce`` makes each design its own program."""
    return TEMPLATE.format(skill=cell.skill, difficulty=float(cell.difficulty), kind=cell.kind,
                           nonce=int(nonce))


def cell_of_program(source: str) -> Cell | None:
    """The cell a lab program declares (``None`` for any other text)."""
    found = _CELL.search(source or "")
    if found is None:
        return None
    return Cell(int(found.group(1)), float(found.group(2)), found.group(3))


@dataclass(frozen=True)
class Task:
    """What the agent reads from an observation."""

    cell: Cell
    nonce: int
    #: The two numbers to add (``None`` when hidden: a leaky environment).
    operands: tuple[int, int] | None
    #: The sum a hint gives away (``None`` without such a hint).
    hinted_sum: int | None
    hinted: bool


def read_task(observation: str) -> Task | None:
    """The task in an agent's first observation (with ``HINT:`` appended when hinted)."""
    found = _TASK.search(observation)
    if found is None:
        return None
    cell = Cell(int(found.group(2)), float(found.group(3)), found.group(4))
    operands = _SUM.search(observation)
    hinted = "\n\nHINT: " in observation
    leak = _HINT_SUM.search(observation.split("\n\nHINT: ", 1)[1]) if hinted else None
    return Task(cell=cell, nonce=int(found.group(1)),
                operands=(int(operands.group(1)), int(operands.group(2))) if operands else None,
                hinted_sum=int(leak.group(1)) + int(leak.group(2)) if leak else None,
                hinted=hinted)
