from __future__ import annotations

from pathlib import Path

from plugins.lab.family import LabFamily, pool_jsonl
from plugins.lab.programs import cell_of_program

ROOT = Path(__file__).resolve().parents[3]


def test_the_shipped_pool_is_every_skill_at_every_difficulty_ordinary():
    assert (ROOT / "plugins/lab/data/pool.jsonl").read_text() == pool_jsonl()
    family = LabFamily()
    assert family.skills == ()  # the simulated designer chooses the skill itself
    assert all(cell_of_program(p.source).kind == "ordinary" for p in family.seed_programs())
