from __future__ import annotations

from pathlib import Path

from plugins.lab.lab_family import LabFamily, pool_jsonl
from plugins.lab.programs import cell_of_program

ROOT = Path(__file__).resolve().parents[3]


def test_the_shipped_pool_is_every_skill_at_every_difficulty_ordinary():
    assert (ROOT / "plugins/lab/data/pool.jsonl").read_text() == pool_jsonl()
    family = LabFamily()
    assert family.skills == ()  # the simulated designer chooses the skill itself
    assert all(cell_of_program(p.source).kind == "ordinary" for p in family.seed_programs())


def test_the_lab_family_accepts_only_lab_programs():
    """Installed with spade-rl, the family must not claim other programs: ``spade envs import``
    gives each program to the first installed family whose static checks accept it."""
    from plugins.lab.learner import Cell
    from plugins.lab.programs import program

    family = LabFamily()
    assert family.static_problems(program(Cell(1, 2.0, "noisy"), 7)) == []
    [problem] = family.static_problems("class QuizEnv:\n    def reset(self, seed=None): ...\n")
    assert "not a lab environment" in problem


def test_the_easy_pool_is_every_skill_at_the_easy_and_moderate_difficulties():
    """The ceiling scenario's pool, like one a weaker model wrote: every skill at -2..2."""
    assert (ROOT / "plugins/lab/data/pool-easy.jsonl").read_text() == pool_jsonl(
        3, (-2.0, -1.0, 0.0, 1.0, 2.0))
