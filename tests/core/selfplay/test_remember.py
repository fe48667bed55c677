"""The remember step (spade_core.selfplay.remember): a played proposal goes into the memory with
its iteration's rewards and figures, any other once with its status and verdict."""

from __future__ import annotations

from types import SimpleNamespace

from spade_core.records import Difficulty, Document, EnvStatus, Episode, Verdict
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.remember import remember

from fakes.selfplay import FakeDictMemory, FakeFamily


def _proposal(program: str) -> Proposal:
    return Proposal(index=0, family=FakeFamily(), document=Document(id="doc", text="six"),
                    prompt=[], completions=[program], program=program)


def _episode(reward: float, hinted: bool = False, timed_out: bool = False) -> Episode:
    return Episode(env_id="", seed=0, hinted=hinted, first_observation="", reward=reward,
                   timed_out=timed_out)


def test_a_played_proposal_is_stored_with_its_rewards_and_figures():
    c = SimpleNamespace(memory=FakeDictMemory())
    p = _proposal("class A: ...")
    p.accept()
    p.unhinted = [_episode(1.0), _episode(0.0, timed_out=True)]
    p.hinted = [_episode(1.0, hinted=True)]
    p.difficulty = Difficulty(figures={"win_rate": 0.5}, designer_reward=0.3, regret=0.5)
    p.designer_reward = 0.3
    assert remember(c, [p], iteration=4) == []  # one win of two: still on the frontier
    record = c.memory.get(p.env_id)
    [entry] = record.history
    assert (entry.iteration, entry.hinted, entry.unhinted) == (4, [1.0], [1.0, 0.0])
    assert entry.figures == {"win_rate": 0.5, "regret": 0.5, "masked": 0.0, "step_timeouts": 1.0}
    assert entry.designer_reward == 0.3
    assert p.status == EnvStatus.FRONTIER and p.plays == 1  # the memory's status, taken back
    p.unhinted = [_episode(1.0), _episode(1.0)]
    [mastered] = remember(c, [p], iteration=5)
    assert mastered.id == p.env_id and p.status == EnvStatus.MASTERED and p.plays == 2


def test_a_rejected_proposal_is_stored_once_with_its_verdict():
    c = SimpleNamespace(memory=FakeDictMemory())
    p = _proposal("not a program")
    p.reject(Verdict(False, "syntax", "no environment program found"))
    assert remember(c, [p], iteration=0) == []
    remember(c, [p], iteration=1)
    [record] = list(c.memory.records())
    assert (record.status, record.verdict_category, record.verdict_message) == \
        (EnvStatus.REJECTED, "syntax", "no environment program found")
    assert record.times_proposed == 1 and record.history == []  # stored once, never played
