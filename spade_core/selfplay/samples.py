"""What one iteration trains on, as the reference trains: the designer's accepted attempts
and the agent's unhinted episodes, with their rewards and the designer's advantage scale
(docs/training.md, "Schedules and what is trained")."""

from __future__ import annotations

from typing import Any, Literal

from spade_core.config.schema import LoopSection
from spade_core.interfaces import TrainingSample
from spade_core.records import Episode, Role
from spade_core.selfplay.iteration import Proposal, failure_reward

__all__ = ["agent_samples", "designer_samples", "env_reward_scale", "masked_turns",
           "scale_designer", "training_samples"]


def env_reward_scale(loop: LoopSection, agent_samples: int, designer_samples: int,
                     interval: int = 1) -> float:
    """What the designer's advantages are multiplied by: ``loop.env_reward_scale``, or the
    reference's ``min(agent samples / designer samples x regeneration interval, cap)`` (the agent
    trajectories one design stands for over its window; 1 when either count is 0)."""
    if loop.env_reward_scale is not None:
        return float(loop.env_reward_scale)
    if agent_samples <= 0 or designer_samples <= 0:
        return 1.0
    return float(min(agent_samples / designer_samples * interval, loop.env_reward_scale_cap))


def _template_meta(loop: LoopSection, role: Literal["designer", "agent"]) -> dict[str, Any]:
    """``chat_template_kwargs`` in a sample's meta when its role set any, so that the trainer
    renders the conversation as generation did."""
    kwargs = loop.template_kwargs(role)
    return {"chat_template_kwargs": kwargs} if kwargs else {}


def designer_samples(loop: LoopSection, proposals: list[Proposal]) -> list[TrainingSample]:
    """The designer's samples with their rewards, as the reference trains: the accepted attempt
    of each fresh proposal (every attempt with ``loop.train_on_failed_attempts``), each carrying
    its skill (the advantage baseline) and whether its reward waits for plays (``played``)."""
    samples = []
    for p in proposals:
        for attempt, completion in enumerate(p.completions):
            last = attempt == len(p.completions) - 1
            accepted = last and p.verdict is not None and p.verdict.valid
            if not accepted and not loop.train_on_failed_attempts:
                continue
            reward = (p.designer_reward if last
                      else failure_reward(loop, p.attempt_categories[attempt]))
            prompt = p.attempt_prompts[attempt] if attempt < len(p.attempt_prompts) else p.prompt
            samples.append(TrainingSample(
                role=Role.DESIGNER,
                messages=prompt + [{"role": "assistant", "content": completion}],
                reward=reward, group=p.env_id,
                meta={"attempt": attempt, "repair": prompt is not p.prompt,
                      "temperature": loop.designer_temperature,
                      **_template_meta(loop, "designer"),
                      "skill": p.target.skill or p.family.name, "family": p.family.name,
                      "played": last and p.difficulty is not None}))
    return samples


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
                                       **_template_meta(loop, "agent")}
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


def scale_designer(loop: LoopSection, samples: list[TrainingSample],
                   interval: int = 1) -> list[TrainingSample]:
    """``samples`` with :func:`env_reward_scale` set on the designer's (``advantage_scale``)."""
    agents = sum(1 for s in samples if s.role == Role.AGENT)
    designs = sum(1 for s in samples if s.role == Role.DESIGNER)
    scale = env_reward_scale(loop, agents, designs, interval)
    for sample in samples:
        if sample.role == Role.DESIGNER:
            sample.meta["advantage_scale"] = scale
    return samples


def training_samples(loop: LoopSection, proposals: list[Proposal]) -> list[TrainingSample]:
    """Designer and agent samples of one iteration, rewarded at once (the frontier schedule). A
    design whose estimate is masked (figure ``masked``: a negative blend) is not trained."""
    masked = {p.env_id for p in proposals
              if p.difficulty is not None and p.difficulty.figures.get("masked")}
    designs = [s for s in designer_samples(loop, proposals)
               if not (s.meta["played"] and s.group in masked)]
    return scale_designer(loop, designs + agent_samples(loop, proposals))
