"""The ``ladder`` designer (RLVE's rule): the lowest rung the memory has not retired, whatever the
model answers; a mastered rung moves it up, a too-hard one is passed over."""

from __future__ import annotations

import pytest

from spade_core.records import Document, EnvRecord, EnvStatus

from plugins.designer.ladder import Ladder
from plugins.designer.options import LadderOptions
from plugins.families.arithmetic import ArithmeticFamily, program


class FakeMemory:
    """A fake memory for this test: records by id."""

    def __init__(self) -> None:
        self.records: dict[str, EnvRecord] = {}

    def get(self, env_id: str) -> EnvRecord | None:
        return self.records.get(env_id)

    def set(self, source: str, status: str) -> None:
        family = ArithmeticFamily()
        rung = next(p for p in family.seed_programs() if p.source == source)
        self.records[rung.id] = EnvRecord(id=rung.id, source=source, family="arithmetic",
                                          status=status)


def test_the_ladder_climbs_when_a_rung_is_mastered_and_passes_over_a_too_hard_one():
    memory = FakeMemory()
    ladder = Ladder(LadderOptions(), {"env_memory": memory})
    family = ArithmeticFamily(["1+1", "2+1", "2+2", "3+3"])
    assert ladder.extract("anything at all", family) == program("1+1")
    memory.set(program("1+1"), EnvStatus.FRONTIER)
    assert ladder.extract("FIRST: 3\nOPERATION: *\nSECOND: 3", family) == program("1+1")
    memory.set(program("1+1"), EnvStatus.MASTERED)
    assert ladder.extract("", family) == program("2+1")
    memory.set(program("2+1"), EnvStatus.TOO_HARD)
    assert ladder.extract("", family) == program("2+2")
    for cell in ("2+2", "3+3"):
        memory.set(program(cell), EnvStatus.MASTERED)
    assert ladder.extract("", family) == program("3+3")  # the top rung once all are retired
    messages = ladder.build(Document(id="d", text=""), family, None)
    assert "cell 3+3" in messages[-1]["content"]


def test_a_family_without_seed_programs_has_no_ladder():
    class NoSeeds(ArithmeticFamily):
        def seed_programs(self):
            return []

    with pytest.raises(ValueError, match="no seed programs"):
        Ladder(LadderOptions(), {}).extract("", NoSeeds())
