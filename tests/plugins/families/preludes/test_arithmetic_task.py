"""The arithmetic prelude's task, ArithmeticTask: training never draws a held-out pair, items
depend on the seed and the program's nonce, each cell keeps its held-out share, the hint is a
worked example, and the reply reader reads the documented shapes and survives hostile ones."""

from __future__ import annotations

import time

import pytest

from plugins.families.arithmetic import parse_cell
from plugins.families.preludes.arithmetic_task import (
    ArithmeticTask,
    apply,
    columns,
    heldout_pair,
    item_seed,
    read_number,
)

from fakes.hostile import HOSTILE_REPLIES


def _task(cell: str, split: str = "train", nonce: int = 0) -> ArithmeticTask:
    first, operation, second = parse_cell(cell)
    cls = type("CellEnv", (ArithmeticTask,), {"FIRST": first, "OPERATION": operation,
                                              "SECOND": second, "SPLIT": split, "NONCE": nonce})
    return cls()


@pytest.mark.parametrize("cell", ["1+1", "2+1", "2-1", "2*2", "3+3", "1-3"])
def test_training_draws_no_held_out_pair_and_items_depend_on_seed_and_nonce(cell):
    _, operation, _ = parse_cell(cell)
    task = _task(cell)
    items = set()
    for seed in range(300):
        task.reset(seed)
        assert not heldout_pair(operation, task.a, task.b)
        assert task.answer == apply(operation, task.a, task.b)
        items.add((task.a, task.b))
    assert len(items) > 30
    other = _task(cell, nonce=1)
    assert [other.reset(s)[0] for s in range(20)] != [task.reset(s)[0] for s in range(20)]


def test_held_out_programs_ask_the_pair_their_seed_names_and_refuse_other_seeds():
    task = _task("2+1", split="heldout")
    pair = next((a, b) for a in range(10, 100) for b in range(10) if heldout_pair("+", a, b))
    question, _ = task.reset(item_seed(*pair))
    assert question == f"What is {pair[0]} + {pair[1]}? Reply with the number only."
    train = next((a, b) for a in range(10, 100) for b in range(10) if not heldout_pair("+", a, b))
    with pytest.raises(ValueError, match="names no held-out pair"):
        task.reset(item_seed(*train))


def test_every_cell_keeps_a_held_out_share_near_sixty_percent():
    for cell in ("2+1", "2-1", "2*1", "2+2"):
        first, operation, second = parse_cell(cell)
        low_a, high_a = (10, 99) if first == "2" else (0, 9)
        low_b, high_b = (10, 99) if second == "2" else (0, 9)
        pairs = [(a, b) for a in range(low_a, high_a + 1) for b in range(low_b, high_b + 1)]
        share = sum(heldout_pair(operation, a, b) for a, b in pairs) / len(pairs)
        assert 0.55 < share < 0.65, (cell, share)


def test_the_hint_is_a_worked_example_of_another_item_of_the_cell():
    task = _task("2+1")
    _, info = task.reset(3)
    assert info["hint"] == task.reset(4)[1]["hint"]  # one hint per program, whatever the seed
    assert "carry" in columns("+", 48, 5) and "borrow" in columns("-", 40, 7)
    assert columns("*", 47, 8).endswith("320 + 56 = 376.")
    assert columns("-", 3, 45).startswith("45 is larger than 3, so work out 45 - 3")


@pytest.mark.parametrize("reply, number", [
    ("8 + 7 = 15", 15), ("The answer is 12.", 12), ("59 + 6 = 12", 12), ("41 + 6 = 47.4", 47.4),
    ("60 + 93 is 153.", 153), ("57 + 2 = 59", 59), ("\\boxed{55}", 55), ("1,234", 1234),
    ("x = -5", -5), ("55.0", 55), ("= 15. So 3 + 4 = 7", 7), ("15", 15),
])
def test_the_reader_takes_the_number_after_the_last_equals_else_the_last(reply, number):
    assert read_number(reply) == number


@pytest.mark.parametrize("reply", ["", "no", "I don't know.", "=", "9" * 40, None, 12])
def test_the_reader_finds_no_number_where_there_is_none(reply):
    assert read_number(reply) is None


def test_hostile_replies_are_read_quickly_without_raising():
    started = time.monotonic()
    for reply in HOSTILE_REPLIES + ("1" * 10**6, "= " + "1," * 10**5, "-" * 10**5 + "1"):
        value = read_number(reply)
        assert value is None or isinstance(value, (int, float))
    assert time.monotonic() - started < 10  # a generous bound against a catastrophic pattern
