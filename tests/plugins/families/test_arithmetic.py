"""The arithmetic family: every cell's program validates in the real sandbox, its solution wins
and junk loses, training never draws a held-out pair, the reply reader reads the documented
shapes and survives hostile ones, the designer's slots become one program per cell, a mastered
cell is refused as a duplicate, and the shipped pools are what the family writes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from spade_core.records import EnvProgram, EnvRecord, EnvStatus
from spade_core.validation import validate

from plugins.designer.options import SkeletonOptions
from plugins.designer.skeleton import Skeleton
from plugins.families.arithmetic import (
    ALL_CELLS,
    POOLS,
    ArithmeticFamily,
    canonical_digits,
    canonical_operation,
    cell_of_program,
    parse_cell,
    pool_jsonl,
    program,
)
from plugins.families.preludes.arithmetic_task import (
    ArithmeticTask,
    apply,
    columns,
    heldout_pair,
    item_seed,
    read_number,
)

from fakes.cli import ROOT
from fakes.hostile import HOSTILE_REPLIES


def _task(cell: str, split: str = "train", nonce: int = 0) -> ArithmeticTask:
    first, operation, second = parse_cell(cell)
    cls = type("CellEnv", (ArithmeticTask,), {"FIRST": first, "OPERATION": operation,
                                              "SECOND": second, "SPLIT": split, "NONCE": nonce})
    return cls()


def test_every_cells_program_is_valid_in_the_process_sandbox(process_sandbox):
    family = ArithmeticFamily()
    programs = [program(cell) for cell in ALL_CELLS]
    verdicts = validate(process_sandbox, programs, family=family)
    assert [(cell, v.category) for cell, v in zip(ALL_CELLS, verdicts)] == [
        (cell, "ok") for cell in ALL_CELLS]
    assert all(v.message == "valid" for v in verdicts)  # solvability verified: the replay wins


def test_solution_replay_wins_and_junk_loses_in_the_sandbox(process_sandbox):
    family = ArithmeticFamily()
    session = process_sandbox.open(program("2*2"), family=family)
    try:
        question, info = session.reset(5)
        assert question.startswith("What is ") and question.endswith("Reply with the number only.")
        assert info["cell"] == "2*2" and "worked example" in info["hint"]
        solution = family.solution_actions(session.solution())
        assert session.step(solution[0]).reward == 1.0
        for junk in family.probe_actions():
            session.reset(5)
            assert session.step(junk).reward == 0.0
    finally:
        session.close()


def test_a_designed_cell_outside_the_selected_cells_or_malformed_is_invalid(process_sandbox):
    broken = program("2+1").replace("OPERATION = '+'", "OPERATION = '/'")
    [verdict] = validate(process_sandbox, [broken], family=ArithmeticFamily())
    assert not verdict.valid and "OPERATION must be one of" in verdict.message


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


@pytest.mark.parametrize("text, digits", [("2", "2"), ("two", "2"), ("2-digit", "2"),
                                          ("3 digits", "3"), ("1 or 2", None), ("", None),
                                          ("four", None)])
def test_digit_counts_as_designers_write_them(text, digits):
    assert canonical_digits(text) == digits


@pytest.mark.parametrize("text, operation", [("+", "+"), ("plus", "+"), ("Addition", "+"),
                                             ("-", "-"), ("subtract", "-"), ("*", "*"),
                                             ("x", "*"), ("times", "*"), ("+ or -", "+"),
                                             ("+ (add), - (subtract) or * (multiply)", "+"),
                                             ("add or subtract", "+"), ("the sum or -", None),
                                             ("divide", None)])
def test_operations_as_designers_write_them(text, operation):
    assert canonical_operation(text) == operation


def test_the_skeleton_turns_any_phrasing_of_a_cell_into_the_one_program():
    family = ArithmeticFamily(["2+1", "1*1"])
    skeleton = Skeleton(SkeletonOptions())
    for answer in ("FIRST: 2\nOPERATION: +\nSECOND: 1", "FIRST: two digits\nOPERATION: plus\n"
                   "SECOND: 1-digit", "**FIRST**: 2\n**OPERATION**: addition\n**SECOND**: one"):
        assert skeleton.extract(answer, family) == program("2+1")
    assert skeleton.extract("FIRST: 2\nOPERATION: *\nSECOND: 2", family) is None  # not selected
    assert skeleton.extract("FIRST: 2\nOPERATION: divide\nSECOND: 1", family) is None
    messages = skeleton.build(_no_document(), family, _no_examples())
    assert family.slot_request() in messages[-1]["content"]
    assert "FIRST: <how many digits" in messages[-1]["content"]


def _no_document():
    from spade_core.records import Document

    return Document(id="none", text="")


def _no_examples():
    from spade_core.interfaces import PromptExamples

    return PromptExamples()


def test_a_mastered_cell_is_refused_as_a_duplicate_and_its_neighbours_are_not(tmp_path):
    from envmemory.memory import FaissEnvMemory
    from envmemory.options import MemoryOptions

    options = MemoryOptions(embedder="hashing", similarity_threshold=0.999,
                            structural_match=False)
    memory = FaissEnvMemory(tmp_path, options)
    try:
        mastered = program("2+1")
        memory.add(EnvRecord(id=EnvProgram(source=mastered, family="arithmetic").id,
                             source=mastered, family="arithmetic", status=EnvStatus.MASTERED))
        designed = Skeleton(SkeletonOptions()).extract("FIRST: two\nOPERATION: plus\nSECOND: 1",
                                                       ArithmeticFamily())
        assert memory.find_duplicate(EnvProgram(source=designed, family="arithmetic")) is not None
        for cell in ("2+2", "1+1", "2-1", "2*1"):
            candidate = EnvProgram(source=program(cell), family="arithmetic")
            assert memory.find_duplicate(candidate) is None, cell
    finally:
        memory.close()


def test_only_the_familys_programs_belong_to_it():
    family = ArithmeticFamily()
    assert family.static_problems(program("3*3")) == []
    assert cell_of_program(program("3*3")) == "3*3"
    seed = (ROOT / "plugins/families/seeds/reasoning/fraction_sum.py").read_text()
    assert family.static_problems(seed) and cell_of_program(seed) is None


def test_unknown_cells_and_repeated_cells_are_refused_with_the_form():
    from plugins.families.options import ArithmeticOptions

    with pytest.raises(ValueError, match="DIGITS OP DIGITS"):
        ArithmeticOptions(cells=["2/1"])
    with pytest.raises(ValueError, match="twice"):
        ArithmeticOptions(cells=["2+1", "2+1"])


def test_hint_none_leaves_the_hint_to_the_model(process_sandbox):
    session = process_sandbox.open(program("2+1"), family=ArithmeticFamily(hint="none"))
    try:
        _, info = session.reset(1)
    finally:
        session.close()
    assert "hint" not in info


def test_a_hint_that_claims_another_number_contradicts():
    family = ArithmeticFamily()
    assert family.hint_contradicts("The answer is 56.", ["55"]) is True
    assert family.hint_contradicts("The answer is 55.", ["55"]) is False
    assert family.hint_contradicts("Add the ones first.", ["55"]) is None


def test_the_shipped_pools_are_what_the_family_writes():
    folder = ROOT / "plugins" / "evals" / "data"
    for name, (cells, per_cell) in POOLS.items():
        assert Path(folder / name).read_text(encoding="utf-8") == pool_jsonl(list(cells),
                                                                              per_cell), name
