"""Dedupe (spade_core.selfplay.dedupe): a valid proposal the memory holds as mastered (the same
program, or one its dedupe index finds near enough) is refused as a duplicate, a copy of a
held-out eval item as contaminated, and the rest accepted onto the frontier; through the real
loop, a mastered environment proposed again is refused."""

from __future__ import annotations

from types import SimpleNamespace

from spade_core.phases import PhaseTimer
from spade_core.records import Document, EnvRecord, EnvStatus, Verdict
from spade_core.selfplay.contamination import ContaminationGuard
from spade_core.selfplay.dedupe import dedupe
from spade_core.selfplay.proposal import Proposal

from fakes.selfplay import FAKE_RUN_CONFIG, FakeDictMemory, FakeFamily, make_run, metrics

MASTERED = "class MasteredEnv: ..."


def _proposal(program: str, valid: bool = True) -> Proposal:
    p = Proposal(index=0, family=FakeFamily(), document=Document(id="doc", text="six"),
                 prompt=[], completions=[program], program=program)
    p.verdict = Verdict(valid, "ok" if valid else "syntax", "valid" if valid else "no program")
    return p


def _memory() -> FakeDictMemory:
    memory = FakeDictMemory()
    memory.add(EnvRecord(id=_proposal(MASTERED).env_id, source=MASTERED, family="fake",
                         status=EnvStatus.MASTERED))
    return memory


def test_mastered_programs_are_refused_and_new_ones_accepted():
    c = SimpleNamespace(memory=_memory())
    same, new, invalid = _proposal(MASTERED), _proposal("class NewEnv: ..."), \
        _proposal("nope", valid=False)
    timer = PhaseTimer()
    dedupe(c, [same, new, invalid], timer=timer)
    assert (same.status, same.duplicate_of, same.similarity) == (
        EnvStatus.DUPLICATE, same.env_id, 1.0)
    assert new.status == EnvStatus.FRONTIER
    assert invalid.status not in (EnvStatus.FRONTIER, EnvStatus.DUPLICATE)  # left as it was
    assert "dedupe" in timer.seconds


def test_a_too_hard_program_proposed_again_is_played_again_and_a_retired_one_is_refused():
    """Too hard is not final (a frontier cell can fail 16 + 16 plays by chance at 10 % success):
    its re-proposal goes back onto the frontier; a retired one stays refused."""
    memory = FakeDictMemory()
    hard, old = "class HardEnv: ...", "class OldEnv: ..."
    memory.add(EnvRecord(id=_proposal(hard).env_id, source=hard, family="fake",
                         status=EnvStatus.TOO_HARD))
    memory.add(EnvRecord(id=_proposal(old).env_id, source=old, family="fake",
                         status=EnvStatus.RETIRED))
    again, retired = _proposal(hard), _proposal(old)
    dedupe(SimpleNamespace(memory=memory), [again, retired])
    assert again.status == EnvStatus.FRONTIER
    assert (retired.status, retired.duplicate_of) == (EnvStatus.DUPLICATE, retired.env_id)


class FakeNearMemory(FakeDictMemory):
    """Its dedupe index finds every program that mentions ``Mastered`` near the mastered one."""

    def find_duplicate(self, program):
        [mastered] = [r for r in self.by_id.values() if r.status == EnvStatus.MASTERED]
        return (mastered, 0.93) if "Mastered" in program.source else None


def test_the_memorys_index_refuses_near_copies_and_the_guard_copies_of_eval_items():
    memory = FakeNearMemory()
    memory.by_id = _memory().by_id
    guard = ContaminationGuard(FakeDictMemory(), threshold=0.9)
    guard.add_items([("gsm8k/7", "class LeakedEnv: ...")])
    near = _proposal("class MasteredEnv:\n    pass")
    leaked, new = _proposal("class LeakedEnv: ..."), _proposal("class NewEnv: ...")
    dedupe(SimpleNamespace(memory=memory), [near, leaked, new], guard)
    assert (near.status, near.duplicate_of, near.similarity) == (
        EnvStatus.DUPLICATE, _proposal(MASTERED).env_id, 0.93)
    assert leaked.status == EnvStatus.REJECTED and leaked.verdict.category == "contaminated"
    assert "gsm8k/7" in leaked.verdict.message and new.status == EnvStatus.FRONTIER


def test_mastered_env_then_refused_as_duplicate(tmp_path):
    loop = dict(FAKE_RUN_CONFIG["loop"], schedule="frontier")
    run_dir, recorder = make_run(tmp_path, {"loop": loop}, always_right=True, texts=["same doc"])
    rows = metrics(run_dir)
    assert rows[0]["envs_mastered"] >= 1
    assert rows[1]["envs_duplicate"] == 2 and rows[1]["envs_played"] == 0
    assert any(e[0] == "env_mastered" for e in recorder.events)
