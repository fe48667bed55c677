"""The lab's environment programs: what each kind pays, and what the agent reads from them.
The programs are the lab's own trusted text, executed here as the sandbox would."""

from __future__ import annotations

from plugins.lab.learner import Cell
from plugins.lab.programs import cell_of_program, program, read_task


def env(cell: Cell, nonce: int = 7):
    namespace: dict = {}
    exec(program(cell, nonce), namespace)  # noqa: S102 - the lab's own template, not model text
    return namespace["LabEnv"]()


def test_ordinary_pays_the_right_sum_only():
    e = env(Cell(1, 2.0))
    observation, info = e.reset(3)
    task = read_task(observation)
    assert task.cell == Cell(1, 2.0) and task.operands and info == {}
    right = sum(task.operands)
    assert e.step(f"solve: \\boxed{{{right}}}")[1] == 1.0
    assert e.step(f"miss: \\boxed{{{right + 1}}}")[1] == 0.0
    assert e.step("\\boxed{1}")[1] == 0.0
    assert e.step(e.solution())[1] == 1.0


def test_leaky_hides_the_numbers_and_its_hint_gives_the_sum_on_every_seed():
    e = env(Cell(0, 5.0, "leaky"))
    first, info = e.reset(1)
    again, same = e.reset(99)
    assert info == same and first == again
    task = read_task(first + "\n\nHINT: " + info["hint"])
    assert task.operands is None and task.hinted
    assert e.step(f"copy: \\boxed{{{task.hinted_sum}}}")[1] == 1.0
    # The hint never holds the answer's digits as one number (the loop's redaction looks for it).
    assert str(task.hinted_sum) not in info["hint"]


def test_noisy_pays_a_seeded_coin_for_any_near_answer_and_nothing_for_junk():
    paid = set()
    for seed in range(12):
        e = env(Cell(0, 0.0, "noisy"))
        observation, _ = e.reset(seed)
        truth = sum(read_task(observation).operands)
        right, near = e.step(f"\\boxed{{{truth}}}")[1], e.step(f"\\boxed{{{truth + 30}}}")[1]
        assert right == near  # correctness does not matter
        assert e.step("\\boxed{1}")[1] == 0.0
        paid.add(right)
    assert paid == {0.0, 1.0}


def test_the_cell_is_read_back_from_the_source():
    assert cell_of_program(program(Cell(2, -1.0, "noisy"), 5)) == Cell(2, -1.0, "noisy")
    assert cell_of_program("class OtherEnv: pass") is None
