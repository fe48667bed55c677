"""Step: build samples. What one iteration trains on, as the reference trains: the agent's
unhinted episodes and the designer's samples, rewarded at once in the frontier schedule, or in
the window schedule the designs of the last window released now (the window's own designs are
held from its start, :mod:`~spade_core.selfplay.designer_reward`); docs/training.md, "Schedules
and what is trained"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spade_core.config.schema import LoopSection
from spade_core.interfaces import Trainer, TrainingSample
from spade_core.records import Episode, Role
from spade_core.selfplay.designer_reward import (
    designer_samples,
    hold_designs,
    scale_designer,
    template_meta,
)
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.window import Windows

__all__ = ["agent_samples", "build_samples", "masked_turns", "training_samples"]


def build_samples(trainer: Trainer, loop: LoopSection, iteration: int, proposals: list[Proposal],
                  windows: Windows | None, starting: bool, released: list[TrainingSample],
                  ledger: Callable[[], dict[str, Any]] | None = None, masked: int = 0
                  ) -> list[TrainingSample]:
    """The iteration's samples. Frontier schedule (``windows`` ``None``): this iteration's
    designs and plays (:func:`training_samples`). Window schedule: at a window's start its
    designs are held (``ledger``, asynchronous training: what the backend generated, for their
    log-probabilities), and the agent's plays are trained with the ``released`` designs of the
    window before (``masked``: how many of that window's designs the estimator masked; they
    count in the designer reward scale)."""
    if windows is None:
        return training_samples(loop, proposals)
    if starting:
        windows.current = hold_designs(trainer, loop, iteration, proposals,
                                       ledger() if ledger is not None else None)
    return scale_designer(loop, released + agent_samples(loop, proposals), windows.interval,
                          masked)


def training_samples(loop: LoopSection, proposals: list[Proposal]) -> list[TrainingSample]:
    """Designer and agent samples of one iteration, rewarded at once (the frontier schedule). A
    design whose estimate is masked (figure ``masked``: a negative blend) is not trained, but
    counts in the designer reward scale, as in the window schedule."""
    masked = {p.env_id for p in proposals
              if p.difficulty is not None and p.difficulty.figures.get("masked")}
    every = designer_samples(loop, proposals)
    designs = [s for s in every if not (s.meta["played"] and s.group in masked)]
    return scale_designer(loop, designs + agent_samples(loop, proposals),
                          masked=len(every) - len(designs))


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
