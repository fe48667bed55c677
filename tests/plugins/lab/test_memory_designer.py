"""The memory-reading designer (``designer: memory``): it imitates and edits the positives of the
prompt it is given, stays away from its negative, and is trained by the policy gradient of its
own log-probability."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from plugins.designer.prompt_parts import examples_text
from plugins.lab.lab_backend import DESIGNER_MARK, LabBackend, LabBackendOptions
from plugins.lab.memory_designer import Examples, gradient, probability, read_examples
from plugins.lab.learner import Cell
from plugins.lab.programs import cell_of_program, program
from spade_core.interfaces import PromptExamples
from spade_core.records import EnvRecord

FRONTIER = Cell(0, 1.0)                 # imitate: skill 0, ordinary, difficulty 0, 1 or 2
HARD = Cell(2, 3.0)                     # imitate: skill 2, ordinary, difficulty 2, 3 or 4
NOISY = Cell(1, 0.0, "noisy")           # in the win band, shows no regret: not imitated
MASTERED = Cell(0, 2.0)                 # the negative: never designed


def make_record(cell: Cell, nonce: int, regret: float | None = None, status: str = "frontier"):
    return EnvRecord(id=f"e{nonce}", family="lab", source=program(cell, nonce), status=status,
                     stats={} if regret is None else {"regret": regret})


def prompt() -> list[dict[str, str]]:
    """A designer prompt as the ``full-program`` strategy writes it, from a hand-made memory."""
    examples = PromptExamples(
        positive=[make_record(FRONTIER, 1, 0.5), make_record(HARD, 2, 0.4),
                  make_record(NOISY, 3, 0.0)],
        negative=[make_record(MASTERED, 4, status="mastered")])
    return [{"role": "system", "content": "You are an environment designer."},
            {"role": "user", "content": f"{DESIGNER_MARK} ...\n\n{examples_text(examples, 1500)}"}]


def designs(backend: LabBackend, n: int) -> Counter:
    replies = backend.generate([prompt()] * n, max_new_tokens=8, temperature=1.0)
    return Counter(cell_of_program(r.text) for r in replies)


def test_the_prompt_examples_are_read_back():
    found = read_examples(prompt())
    assert found.positive == [FRONTIER, HARD, NOISY] and found.regret == [0.5, 0.4, 0.0]
    assert found.negative == [MASTERED]
    line = [{"role": "user", "content": "Avoid tasks like: Lab environment: skill 1, difficulty "
                                        "3.0, kind leaky (too hard, win rate 0.00)"}]
    assert read_examples(line).negative == [Cell(1, 3.0, "leaky")]


def test_it_imitates_and_edits_the_positives_and_stays_away_from_the_negative():
    backend = LabBackend(LabBackendOptions(designer="memory", designer_epsilon=0.0), seed=5)
    made = designs(backend, 600)
    allowed = {Cell(0, 0.0), Cell(0, 1.0), Cell(2, 2.0), Cell(2, 3.0), Cell(2, 4.0)}
    assert set(made) == allowed  # every edit of both positives, nothing else
    assert MASTERED not in made  # the edit one level up of FRONTIER is the negative's cell
    assert not any(c.kind == "noisy" for c in made)  # a positive with no regret: not imitated
    # Regret-weighted choice of the example (0.5 : 0.4), then an edit uniform over the allowed:
    # FRONTIER has two (down, none), HARD three.
    assert made[Cell(0, 0.0)] / 600 == pytest.approx(0.5 / 0.9 / 2, abs=0.06)
    assert made[Cell(2, 4.0)] / 600 == pytest.approx(0.4 / 0.9 / 3, abs=0.06)


def test_the_exploration_floor_still_reaches_every_kind():
    backend = LabBackend(LabBackendOptions(designer="memory", designer_epsilon=0.3), seed=6)
    made = designs(backend, 600)
    outside = sum(n for c, n in made.items() if c.skill == 1 or c.kind != "ordinary")
    assert 0.1 < outside / 600 < 0.35  # floor draws: 0.3, of which 8/9 leave both positives


def test_without_examples_it_is_the_categorical_policy():
    memory = LabBackend(LabBackendOptions(designer="memory"), seed=7)
    learned = LabBackend(LabBackendOptions(designer="learned"), seed=7)
    empty = [{"role": "user", "content": DESIGNER_MARK}]
    assert [memory.choose_cell(empty) for _ in range(50)] == [
        learned.choose_cell(empty) for _ in range(50)]


def test_the_update_is_the_gradient_of_its_log_probability():
    backend = LabBackend(LabBackendOptions(designer="memory", designer_epsilon=0.0), seed=8)
    lab, examples = backend.learner, read_examples(prompt())
    lab.logits[lab.index[HARD]] = 0.3
    lab.edit_logits = [0.2, -0.1, 0.4]
    cell = Cell(2, 4.0)
    dz, de = gradient(lab, examples, cell)
    h = 1e-6
    for params, grad, k in ((lab.logits, dz, lab.index[HARD]), (lab.logits, dz,
                                                                lab.index[FRONTIER]),
                            (lab.edit_logits, de, 2), (lab.edit_logits, de, 0)):
        base = math.log(probability(lab, examples, cell))
        params[k] += h
        moved = math.log(probability(lab, examples, cell))
        params[k] -= h
        assert grad[k] == pytest.approx((moved - base) / h, abs=1e-4)


def test_a_rewarded_edit_is_made_more_often():
    from plugins.lab.memory_designer import update

    backend = LabBackend(LabBackendOptions(designer="memory", designer_epsilon=0.0), seed=9)
    lab, examples = backend.learner, read_examples(prompt())
    before = probability(lab, examples, Cell(2, 4.0))
    update(lab, [(examples, Cell(2, 4.0), 1.0, 1.0), (examples, Cell(2, 2.0), -1.0, 1.0)])
    assert lab.edit_logits[2] > 0 > lab.edit_logits[0]
    assert probability(lab, examples, Cell(2, 4.0)) > before
    assert probability(lab, Examples(), Cell(2, 4.0)) > 0  # without examples: the policy


def test_a_positive_it_cannot_design_is_left_out():
    """A prompt may show a cell outside this lab's cells (here: noisy, with traps switched off)."""
    backend = LabBackend(LabBackendOptions(designer="memory", designer_epsilon=0.0,
                                           trap_share=0.0), seed=10)
    examples = Examples(positive=[Cell(1, 0.0, "noisy"), FRONTIER], regret=[0.9, 0.5])
    assert probability(backend.learner, examples, Cell(0, 0.0)) == pytest.approx(1 / 3)


def test_code_blocks_find_what_the_regular_expression_finds():
    """The prompt's blocks are found in linear time, exactly as ``_BLOCK.findall`` finds them."""
    import random

    from plugins.lab.memory_designer import _BLOCK, code_blocks

    rng = random.Random(0)
    parts = ["\n", "```", "```python", "\n```python\n", "a", "b c", "A good task:", "Avoid",
             "\n\n", "x\n", program(Cell(1, 2.0), 7)]
    for _ in range(3000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 14)))
        assert code_blocks(text) == _BLOCK.findall(text), repr(text)
