"""The arithmetic family: every cell's program validates in the real sandbox, its solution wins
and junk loses, the designer's slots become one program per cell, a mastered cell is refused as a
duplicate, and the shipped pools are what the family writes. The task the programs subclass (its
items, held-out split, hint and reply reader) is tested in
tests/plugins/families/preludes/test_arithmetic_task.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from spade_core.interfaces import NoProgram
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

from fakes.cli import ROOT


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
    with pytest.raises(NoProgram, match=r"cell 2\*2 is not one of this run's cells \(2\+1, 1\*1\)"):
        skeleton.extract("FIRST: 2\nOPERATION: *\nSECOND: 2", family)  # not selected
    with pytest.raises(NoProgram, match="OPERATION: 'divide' is not one of the operations"):
        skeleton.extract("FIRST: 2\nOPERATION: divide\nSECOND: 1", family)
    with pytest.raises(NoProgram, match="no line gives SECOND"):
        skeleton.extract("FIRST: 2\nOPERATION: +", family)
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
    from envmemory.faiss_memory import FaissEnvMemory
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
