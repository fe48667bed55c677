"""The agent's training samples from one iteration's plays (the designer's come from
:mod:`~spade_core.selfplay.designer_reward`), and the sample meta both roles share; the schedule
(:mod:`~spade_core.selfplay.schedule`) puts an iteration's samples together, docs/training.md,
"Schedules and what is trained"."""

from __future__ import annotations

from typing import Any, Literal

from spade_core.config.schema import LoopSection
from spade_core.interfaces import TrainingSample
from spade_core.records import Episode, Role
from spade_core.selfplay.proposal import Proposal

__all__ = ["agent_samples", "masked_turns", "template_meta"]


def template_meta(loop: LoopSection, role: Literal["designer", "agent"]) -> dict[str, Any]:
    """``chat_template_kwargs`` in a sample's meta when its role set any, so that the trainer
    renders the conversation as generation did."""
    kwargs = loop.template_kwargs(role)
    return {"chat_template_kwargs": kwargs} if kwargs else {}


def agent_samples(loop: LoopSection, proposals: list[Proposal]) -> list[TrainingSample]:
    """The agent's unhinted episodes (hinted ones too with ``loop.train_on_hinted``; the
    reference plays hinted episodes to measure regret only)."""
    samples = []
    for p in proposals:
        episodes = p.unhinted + p.hinted
        for episode, conversation in zip(episodes, p.conversations):
            if episode.hinted and not loop.train_on_hinted:
                continue
            meta: dict[str, object] = {"seed": episode.seed, "hinted": episode.hinted,
                                       "temperature": loop.agent_temperature,
                                       **template_meta(loop, "agent")}
            masked = masked_turns(episode, conversation)
            if masked:
                meta["masked_turns"] = masked
            samples.append(TrainingSample(
                role=Role.AGENT, messages=conversation, reward=episode.reward, group=p.env_id,
                meta=meta))
    return samples


def masked_turns(episode: Episode, conversation: list[dict[str, str]]) -> list[int]:
    """Indices into ``conversation`` of the assistant messages whose turn is ``masked`` (the
    k-th assistant message is the reply of the k-th turn)."""
    replies = [i for i, m in enumerate(conversation) if m.get("role") == "assistant"]
    return [replies[k] for k, turn in enumerate(episode.turns)
            if turn.masked and k < len(replies)]
