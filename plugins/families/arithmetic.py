"""The ``arithmetic`` family: numeric questions at the bundled model's level, on a ladder of cells.

A *cell* is the first operand's digits, the operation and the second operand's digits (``2+1``:
a two-digit number plus a one-digit number). The designer only chooses the cell, through three
slots of the skeleton; the family writes the program, a subclass of the injected
``ArithmeticTask`` (``preludes/arithmetic_task.py``) that draws the cell's items from the seed,
reads the reply's number leniently and pays 1 for the right number. A constant reply scores about
0 and plays of one cell disagree, so GRPO has a signal where the yes/no levels gave none.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

from spade_core.interfaces import NoProgram
from spade_core.records import EnvProgram

from plugins.families.family_base import SourceFamily
from plugins.families.preludes.arithmetic_task import (
    ASK,
    DIGIT_RANGES,
    OPERATIONS,
    cell_name,
    read_number,
)

#: Every cell: digits of A, operation, digits of B.
ALL_CELLS: tuple[str, ...] = tuple(cell_name(a, op, b) for op in OPERATIONS
                                   for a in DIGIT_RANGES for b in DIGIT_RANGES)
_CELL = re.compile(r"^([123])([-+*])([123])$")

#: The program a designer's choice becomes: only the three constants vary.
TEMPLATE = '''\
class ArithmeticEnv(ArithmeticTask):
    """An arithmetic drill: FIRST-digit OPERATION SECOND-digit numbers."""

    FIRST = {first!r}
    OPERATION = {operation!r}
    SECOND = {second!r}
    SPLIT = {split!r}
    NONCE = {nonce!r}
'''

#: The skeleton the designer fills: three short slots (a ~100M designer fills short slots
#: reliably), canonicalised by :meth:`ArithmeticFamily.canonical_slots`.
SLOT_TEMPLATE = '''\
# {{FIRST}}: how many digits the first number has: 1, 2 or 3
# {{OPERATION}}: the operation: + (add), - (subtract) or * (multiply)
# {{SECOND}}: how many digits the second number has: 1, 2 or 3
class ArithmeticEnv(ArithmeticTask):
    """An arithmetic drill: FIRST-digit OPERATION SECOND-digit numbers."""

    FIRST = {{FIRST}}
    OPERATION = {{OPERATION}}
    SECOND = {{SECOND}}
    SPLIT = 'train'
    NONCE = 0
'''

SLOT_EXAMPLE: tuple[str, dict[str, str]] = (
    "Column addition adds the ones first, writes the ones digit of the result and carries the "
    "tens to the next column.",
    {"FIRST": "2", "OPERATION": "+", "SECOND": "2"},
)

REQUEST = ("Choose one kind of arithmetic question for a learner to practise: how many digits "
           "each number has and the operation.")

AGENT_INSTRUCTIONS = f"You are a calculator. {ASK}"

#: Junk replies that must not be right for any item: no number, or a number no cell can give.
PROBE_ACTIONS: tuple[str, ...] = (
    "", "I don't know.", "The answer is a number.", "=", "\\boxed{}", "99999999", "-99999999",
)

_WORDS = {
    "+": ("+", "plus", "add", "addition", "adding", "sum"),
    "-": ("-", "\u2212", "minus", "subtract", "subtraction", "subtracting", "difference"),
    "*": ("*", "x", "\u00d7", "times", "multiply", "multiplication", "multiplying", "product"),
}
_DIGIT_WORDS = {"1": ("1", "one"), "2": ("2", "two"), "3": ("3", "three")}


def canonical_operation(text: str) -> str | None:
    """``+``, ``-`` or ``*`` for an operation as a designer writes it (a symbol or a word), else
    ``None``. A value that names several starts with its choice ("+ (add), - (subtract) or *",
    the slot's description copied, chooses +)."""
    words = re.findall(r"[a-z]+|[-+*\u2212\u00d7]", text.strip().lower()[:40])
    named = [op for w in words for op, names in _WORDS.items() if w in names]
    if len(set(named)) == 1 or (named and words[0] in _WORDS[named[0]]):
        return named[0]
    return None


def canonical_digits(text: str) -> str | None:
    """``1``, ``2`` or ``3`` for a digit count as a designer writes it ("2", "two", "2-digit",
    "2 digits"), else ``None``."""
    words = re.findall(r"[a-z]+|\d+", text.strip().lower()[:40])
    found = {d for d, names in _DIGIT_WORDS.items() for w in words if w in names}
    return found.pop() if len(found) == 1 else None


def parse_cell(name: str) -> tuple[str, str, str]:
    """``("2", "+", "1")`` for ``"2+1"``; ``ValueError`` naming the form otherwise."""
    found = _CELL.match(name.strip())
    if found is None:
        raise ValueError(f"unknown cell {name!r}: a cell is DIGITS OP DIGITS with digits 1-3 and "
                         "op + - or *, e.g. 2+1")
    return found.group(1), found.group(2), found.group(3)


def check_cells(cells: list[str]) -> list[str]:
    """``cells`` when each is a known cell and none is repeated (a ``cells`` option's check)."""
    for cell in cells:
        parse_cell(cell)
    if len(set(cells)) != len(cells):
        raise ValueError(f"cells {cells} lists a cell twice")
    return cells


def program(cell: str, *, split: str = "train", nonce: int = 0) -> str:
    """The source of the environment for ``cell`` (trusted: the family writes it)."""
    first, operation, second = parse_cell(cell)
    return TEMPLATE.format(first=first, operation=operation, second=second, split=split,
                           nonce=int(nonce))


def pool_jsonl(cells: list[str], programs_per_cell: int) -> str:
    """A fixed pool of the family's training programs, one JSON object a line: each cell's
    programs differ by ``NONCE`` (so they draw different items for the same seeds)."""
    import json

    return "".join(json.dumps({"program": program(cell, nonce=k), "description": f"cell {cell}",
                               "cell": cell}) + "\n"
                   for cell in cells for k in range(programs_per_cell))


#: The pools of plugins/evals/data (file name -> cells, programs per cell): rebuilt by
#: ``python -m plugins.families.arithmetic``, checked by tests/plugins/families/test_arithmetic.py.
POOLS: dict[str, tuple[tuple[str, ...], int]] = {
    "arithmetic_control_pool.jsonl": (("2+1",), 8),
    "arithmetic_easy_pool.jsonl": (("1+1", "1*1"), 4),
    "arithmetic_all_pool.jsonl": (("1+1", "1*1", "2+1", "2-1", "2+2", "2*1", "3+3"), 2),
}


def cell_of_program(source: str) -> str | None:
    """The cell an arithmetic program declares, or ``None`` for any other text."""
    found = re.search(r"^\s*FIRST = '([123])'\s*\n\s*OPERATION = '([-+*])'\s*\n"
                      r"\s*SECOND = '([123])'\s*$", source or "", re.M)
    return cell_name(*found.groups()) if found else None


class ArithmeticFamily(SourceFamily):
    """Numeric questions on the cells of ``cells``; the designer picks the cell."""

    name = "arithmetic"
    prelude_files = ("preludes/arithmetic_task.py",)
    base_classes = {"ArithmeticTask": ("__init__", "reset", "step", "solution", "close")}

    def __init__(self, cells: list[str] | None = None, hint: str = "example") -> None:
        super().__init__([])
        self.cells = tuple(check_cells(list(cells))) if cells else ALL_CELLS
        self.hint = hint

    @cached_property
    def prelude(self) -> str:
        source = super().prelude
        # hint: none leaves the hint to the hint call of the model (``hints``).
        return source + ("\n\nEXAMPLE_HINTS = False\n" if self.hint == "none" else "")

    def designer_guide(self, skill: str | None = None) -> str:
        return (f"The kinds a learner may practise: {', '.join(self.cells)} (digits of the first "
                "number, the operation, digits of the second). The program draws fresh numbers "
                "of that kind for every episode.")

    def skeleton(self) -> str:
        return SLOT_TEMPLATE

    def skeleton_example(self) -> tuple[str, dict[str, str]]:
        return SLOT_EXAMPLE

    def slot_request(self) -> str:
        return REQUEST

    def canonical_slots(self, values: dict[str, str]) -> dict[str, str] | None:
        """The cell in one form (``"2"``, ``"+"``, ``"1"``); :class:`NoProgram` says which slot
        names no digit count or operation, or that the cell is not one of ``cells``."""
        first, second = (canonical_digits(values.get(k, "")) for k in ("FIRST", "SECOND"))
        operation = canonical_operation(values.get("OPERATION", ""))
        for slot, value in (("FIRST", first), ("OPERATION", operation), ("SECOND", second)):
            if value is None:
                raise NoProgram(f"{slot}: {values.get(slot, '')!r} is not one of "
                                f"{'the operations + - *' if slot == 'OPERATION' else '1, 2, 3'}")
        cell = cell_name(first, operation, second)
        if cell not in self.cells:
            raise NoProgram(f"cell {cell} is not one of this run's cells ({', '.join(self.cells)})")
        return {"FIRST": first, "OPERATION": operation, "SECOND": second}

    def agent_instructions(self) -> str:
        return AGENT_INSTRUCTIONS

    def seed_programs(self) -> list[EnvProgram]:
        return [EnvProgram(source=program(cell), family=self.name, description=f"cell {cell}")
                for cell in self.cells]

    def static_problems(self, source: str) -> list[str]:
        """Only programs of the template belong here (``spade envs import`` gives a program to
        the first installed family that accepts it)."""
        if cell_of_program(source) is None:
            return ["not an arithmetic environment: a subclass of ArithmeticTask with the FIRST, "
                    "OPERATION and SECOND constants of plugins/families/arithmetic.py's template"]
        return super().static_problems(source)

    def probe_actions(self) -> tuple[str, ...]:
        return PROBE_ACTIONS

    def hint_contradicts(self, hint: str, solution_actions: list[str] | None) -> bool | None:
        """A hint that claims an answer (``the answer is N``, ``\\boxed{N}``) other than the
        item's number (numbers read as replies are)."""
        from spade_core.selfplay.hint_writer import contradicts_answer

        return contradicts_answer(hint, solution_actions, _same_number)


def _same_number(given: Any, expected: Any) -> bool:
    value = read_number(str(given))
    return value is not None and value == read_number(str(expected))


if __name__ == "__main__":
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "evals" / "data"
    for name, (cells, per_cell) in POOLS.items():
        (folder / name).write_text(pool_jsonl(list(cells), per_cell), encoding="utf-8")
        print(f"wrote {folder / name}")
