"""The agent's training samples (spade_core.selfplay.samples): its unhinted plays (hinted too
only when asked) and their masked turns. The designer's samples in both schedules:
tests/core/selfplay/test_schedule.py."""

from __future__ import annotations

from spade_core.config.schema import LoopSection
from spade_core.records import Episode, Turn
from spade_core.selfplay.samples import agent_samples, masked_turns

from fakes.selfplay import played_proposal


def _conversation(*replies: str) -> list[dict[str, str]]:
    out = [{"role": "user", "content": "Question"}]
    for reply in replies:
        out += [{"role": "assistant", "content": reply}, {"role": "user", "content": "next"}]
    return out


def test_agent_samples_are_the_unhinted_plays_unless_hinted_ones_are_asked_for():
    p = played_proposal()
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
    p = played_proposal()
    p.unhinted[0].turns = turns[1:2]
    [first, second] = agent_samples(LoopSection(), [p])
    assert first.meta["masked_turns"] == [1] and "masked_turns" not in second.meta
