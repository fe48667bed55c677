"""The ``arithmetic`` eval suite: held-out items of the arithmetic family's cells, one bucket per
cell, played unhinted through the sandbox as the loop plays them.

Every cell's pairs are split once and for all (``heldout_pair`` in the family's prelude); the
suite asks only held-out pairs, which no training program of the family ever draws, in a fixed
order (the same items for every run, arm and seed), through the cell's ``SPLIT = "heldout"``
program at the seed that names the pair."""

from __future__ import annotations

import random
from collections.abc import Sequence

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSettings, EvalSuite, GenerationBackend, Sandbox

from plugins.evals.items import spread
from plugins.evals.options import ArithmeticSuiteOptions
from plugins.evals.programs_suite import play_programs
from plugins.families.arithmetic import ArithmeticFamily, parse_cell, program
from plugins.families.preludes.arithmetic_task import (
    ASK,
    DIGIT_RANGES,
    apply,
    heldout_pair,
    item_seed,
)


#: Most plays of one program in one call (a sandbox opens them together, at most 1,024).
SESSIONS_PER_CALL = 512


def heldout_pairs(cell: str) -> list[tuple[int, int]]:
    """Every held-out pair of ``cell``, in the suite's fixed order (shuffled by the cell's name)."""
    first, operation, second = parse_cell(cell)
    low_a, high_a = DIGIT_RANGES[int(first)]
    low_b, high_b = DIGIT_RANGES[int(second)]
    pairs = [(a, b) for a in range(low_a, high_a + 1) for b in range(low_b, high_b + 1)
             if heldout_pair(operation, a, b)]
    random.Random(cell).shuffle(pairs)
    return pairs


class ArithmeticSuite(EvalSuite):
    """``items_per_cell`` held-out items of each of ``cells``."""

    name = "arithmetic"

    def __init__(self, cells: Sequence[str], items_per_cell: int, sandbox: Sandbox) -> None:
        self.cells = list(cells)
        self.items_per_cell = items_per_cell
        self.sandbox = sandbox
        self.family = ArithmeticFamily(self.cells, hint="none")

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        by_cell: dict[str, list[EvalItem]] = {}
        for cell in self.cells:
            source = program(cell, split="heldout")
            _, operation, _ = parse_cell(cell)
            by_cell[cell] = [
                EvalItem(id=f"{cell}:{a},{b}", bucket=cell, text=f"What is {a} {operation} {b}?",
                         gold=(str(apply(operation, a, b)),),
                         data={"program": source, "family": self.family, "seed": item_seed(a, b)})
                for a, b in heldout_pairs(cell)[:self.items_per_cell]]
        return spread(by_cell, limit)

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        """The items in chunks of at most :data:`SESSIONS_PER_CALL` plays: a cell's items share
        one program, whose plays of one call are opened together in one worker."""
        size = max(1, SESSIONS_PER_CALL // max(1, settings.samples))
        scores: list[list[float]] = []
        for start in range(0, len(items), size):
            scores += play_programs(self.sandbox, items[start:start + size], backend, settings)
        return scores

    def gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """Each item's number, keyed by the question its program asks."""
        return {f"{item.text} {ASK}": item.gold for item in items}


def build(options: ArithmeticSuiteOptions, context: BuildContext) -> ArithmeticSuite:
    sandbox = context.components.get("sandbox")
    if sandbox is None:
        raise ConfigError("the arithmetic suite plays programs through a sandbox; none was built")
    return ArithmeticSuite(options.cells, options.items_per_cell, sandbox)
