"""Building what an iteration trains on (spade_core.selfplay.samples): the agent's unhinted plays
(hinted too only when asked), masked turns, and the designer's samples in both schedules."""

from __future__ import annotations

import dataclasses

from spade_core.config.schema import LoopSection
from spade_core.interfaces import TrainingSample
from spade_core.records import Difficulty, Document, Episode, Role, Turn, Verdict
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.samples import agent_samples, build_samples, masked_turns
from spade_core.selfplay.window import Window, Windows

from fakes.selfplay import FakeFamily


def _conversation(*replies: str) -> list[dict[str, str]]:
    out = [{"role": "user", "content": "Question"}]
    for reply in replies:
        out += [{"role": "assistant", "content": reply}, {"role": "user", "content": "next"}]
    return out


def _played() -> Proposal:
    """A fresh, accepted, played proposal: two unhinted plays and one hinted."""
    p = Proposal(index=0, family=FakeFamily(), document=Document(id="d", text="six"),
                 prompt=[{"role": "user", "content": "Design."}], completions=["class A: ..."],
                 program="class A: ...", verdict=Verdict(True, "ok", "valid"))
    p.accept()
    p.unhinted = [Episode(env_id="", seed=s, hinted=False, first_observation="", reward=r)
                  for s, r in ((0, 1.0), (1, 0.0))]
    p.hinted = [Episode(env_id="", seed=0, hinted=True, first_observation="", reward=1.0)]
    p.conversations = [_conversation("a"), _conversation("b"), _conversation("c")]
    p.designer_reward = 0.7
    return p


def test_agent_samples_are_the_unhinted_plays_unless_hinted_ones_are_asked_for():
    p = _played()
    samples = agent_samples(LoopSection(), [p])
    assert [(s.reward, s.meta["hinted"], s.messages[1]["content"]) for s in samples] == \
        [(1.0, False, "a"), (0.0, False, "b")]
    assert {s.group for s in samples} == {p.env_id}
    with_hinted = agent_samples(LoopSection(train_on_hinted=True), [p])
    assert [s.meta["hinted"] for s in with_hinted] == [False, False, True]


def test_masked_turns_are_the_indices_of_their_assistant_replies():
    turns = [Turn(action="a", observation="", reward=0.0),
             Turn(action="b", observation="", reward=0.0, masked=True),
             Turn(action="c", observation="", reward=0.0, masked=True)]
    episode = Episode(env_id="", seed=0, hinted=False, first_observation="", turns=turns)
    assert masked_turns(episode, _conversation("a", "b")) == [3]  # the third reply was not sent
    p = _played()
    p.unhinted[0].turns = turns[1:2]
    [first, second] = agent_samples(LoopSection(), [p])
    assert first.meta["masked_turns"] == [1] and "masked_turns" not in second.meta


def test_frontier_samples_reward_the_design_at_once_and_window_samples_hold_it():
    class Trainer:
        def record_logprobs(self, samples):
            return [[-0.5] for _ in samples]

    loop = LoopSection()
    p = _played()
    samples = build_samples(Trainer(), loop, 0, [p], None, True, [])
    [design] = [s for s in samples if s.role == "designer"]
    assert design.reward == 0.7 and design.meta["advantage_scale"] == 2.0  # 2 agent / 1 design
    assert sum(s.role == "agent" for s in samples) == 2

    windows = Windows(interval=2)
    samples = build_samples(Trainer(), loop, 0, [p], windows, True, [])
    assert [s.role for s in samples] == ["agent", "agent"]  # the design waits for its window
    [held] = windows.current.designs
    assert held.env_id == p.env_id and held.rollout_logps == [-0.5]
    assert windows.current.start == 0


def test_the_designer_reward_scale_counts_masked_designs_as_the_reference_does():
    """Issue 48: env_reward_scale is agent samples / designs x interval with the designs counted
    before the masked ones are dropped (the reference's count), so masking one design does not
    make the others' advantages bigger."""
    loop = LoopSection()
    # Window schedule: 2 agent samples; the window before released 2 designs, 1 of them masked.
    released = [TrainingSample(role=Role.DESIGNER, messages=_conversation("class B: ..."),
                               reward=0.5, group="b", meta={})]
    windows = Windows(interval=2, current=Window(start=2))
    samples = build_samples(None, loop, 3, [_played()], windows, False, released, masked=1)
    [design] = [s for s in samples if s.role == Role.DESIGNER]
    assert design.meta["advantage_scale"] == 2.0  # 2 agent samples / 2 designs x 2, not 4
    # Frontier schedule: two played designs, one masked by its estimate; 4 agent samples.
    kept, masked = _played(), _played()
    masked.program = "class M: ..."  # another program, so another environment id
    kept.difficulty = Difficulty(figures={}, designer_reward=0.7, regret=0.1)
    masked.difficulty = dataclasses.replace(kept.difficulty, figures={"masked": 1.0})
    samples = build_samples(None, loop, 0, [kept, masked], None, True, [])
    [design] = [s for s in samples if s.role == Role.DESIGNER]
    assert design.group == kept.env_id
    assert design.meta["advantage_scale"] == 2.0  # 4 agent samples / 2 designs, not 4
