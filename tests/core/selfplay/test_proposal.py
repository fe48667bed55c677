"""A proposal's state changes (spade_core.selfplay.proposal): every status is set by one method,
and the next attempt is a repair turn only while repairs are left."""

from __future__ import annotations

from types import SimpleNamespace

from spade_core.config.schema import LoopSection
from spade_core.records import Document, EnvRecord, EnvStatus, Verdict
from spade_core.selfplay.proposal import Proposal

from fakes.selfplay import FakeFamily

PROMPT = [{"role": "user", "content": "Design an environment."}]


def _proposal() -> Proposal:
    return Proposal(index=0, family=FakeFamily(), document=Document(id="d", text="six"),
                    prompt=PROMPT)


def test_each_state_change_sets_its_status():
    p = _proposal()
    assert p.status == EnvStatus.REJECTED  # until accepted
    p.accept()
    assert p.status == EnvStatus.FRONTIER
    p.refuse_as_duplicate("abc", 0.97)
    assert (p.status, p.duplicate_of, p.similarity) == (EnvStatus.DUPLICATE, "abc", 0.97)
    verdict = Verdict(False, "syntax", "no program")
    p.reject(verdict)
    assert p.status == EnvStatus.REJECTED and p.verdict is verdict
    p.reject()  # no new verdict: the old one stays
    assert p.verdict is verdict
    p.take_status(EnvRecord(id="x", source="", family="fake-qa", status=EnvStatus.MASTERED,
                            history=[object(), object()]))
    assert (p.status, p.plays) == (EnvStatus.MASTERED, 2)
    p.retire()
    assert p.status == EnvStatus.RETIRED


def test_the_next_prompt_is_a_repair_turn_only_while_repairs_are_left():
    repairs = []
    designer = SimpleNamespace(repair=lambda prompt, completion, verdict, family: (
        repairs.append(completion) or prompt + [{"role": "user", "content": verdict.message}]))
    c = SimpleNamespace(designer=designer)
    p = _proposal()
    loop = LoopSection(max_repairs=1)
    assert p.next_prompt(c, loop) is PROMPT  # nothing written yet
    p.completions.append("I cannot do that.")
    p.attempt_prompts.append(PROMPT)
    p.verdict = Verdict(False, "syntax", "no environment program found")
    repair = p.next_prompt(c, loop)
    assert repair[-1]["content"] == "no environment program found" and p.repairs == 1
    assert repairs == ["I cannot do that."]
    assert p.next_prompt(c, loop) is PROMPT  # no repair left: a fresh sample
    assert p.next_prompt(c, LoopSection(max_repairs=0)) is PROMPT and p.repairs == 1
