"""The designer's reward, in one module, from the verdict or the estimate to its samples:

- step ``reward`` (:func:`reward`): each proposal's immediate reward: a played one's estimate,
  a duplicate's ``loop.duplicate_reward``, any other's verdict's (:func:`failure_reward`);
- the frontier schedule trains a played design on that reward at once (:func:`immediate_designs`);
  the window schedule holds it with its generation-time log-probabilities (:func:`hold_designs`)
  and rewards it over its whole window when the next window starts (step ``release``,
  :func:`release`);
- either way a design the estimator masks (``Difficulty.train`` false) is not trained, and the
  designer's advantages are scaled by the agent samples one design stands for
  (:func:`scale_designer`), the masked designs counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spade_core.config.schema import LoopSection
from spade_core.interfaces import (
    DifficultyEstimator,
    EnvMemory,
    EnvRecord,
    EstimateInput,
    TrainingSample,
)
from spade_core.records import EnvProgram, EnvStatus, Role, VerdictCategory
from spade_core.selfplay.difficulty import checked_estimate, skill_window_means
from spade_core.selfplay.pipeline import stamp_samples
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.samples import template_meta
from spade_core.selfplay.window import HeldDesign, Window, window_timeouts


def reward(loop: LoopSection, proposals: list[Proposal]) -> None:
    """Step: reward. Each proposal's immediate designer reward (``p.designer_reward``): a played
    one's estimate (``p.difficulty.designer_reward``), a duplicate's ``loop.duplicate_reward``,
    any other's its verdict's :func:`failure_reward`."""
    for p in proposals:
        if p.played:
            p.designer_reward = p.difficulty.designer_reward
        elif p.status == EnvStatus.DUPLICATE:
            p.designer_reward = loop.duplicate_reward
        else:
            p.designer_reward = failure_reward(loop, p.verdict.category if p.verdict else "")


def failure_reward(loop: LoopSection, category: str) -> float:
    """The designer's reward for a proposal that was not played, by verdict category."""
    return loop.timeout_reward if category == VerdictCategory.TIMEOUT else loop.invalid_reward


def env_reward_scale(loop: LoopSection, agent_samples: int, designer_samples: int,
                     interval: int = 1) -> float:
    """What the designer's advantages are multiplied by: ``loop.env_reward_scale``, or the
    reference's ``min(agent samples / designs x regeneration interval, cap)`` (the agent
    trajectories one design stands for over its window, the designs counted before masking;
    1 when either count is 0)."""
    if loop.env_reward_scale is not None:
        return float(loop.env_reward_scale)
    if agent_samples <= 0 or designer_samples <= 0:
        return 1.0
    return float(min(agent_samples / designer_samples * interval, loop.env_reward_scale_cap))


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
                      **template_meta(loop, "designer"),
                      "skill": p.target.skill or p.family.name, "family_name": p.family.name,
                      "played": last and p.difficulty is not None}))
    return samples


def immediate_designs(loop: LoopSection, proposals: list[Proposal]
                      ) -> tuple[list[TrainingSample], int]:
    """The frontier schedule's designer samples, rewarded at once (:func:`designer_samples`),
    and how many were masked: a played design whose estimate says ``train=False`` (e.g. a
    negative blend) is left out, but counts in the designer reward scale
    (:func:`scale_designer`), as in the window schedule."""
    masked = {p.env_id for p in proposals if p.difficulty is not None and not p.difficulty.train}
    every = designer_samples(loop, proposals)
    designs = [s for s in every if not (s.meta["played"] and s.group in masked)]
    return designs, len(every) - len(designs)


def scale_designer(loop: LoopSection, samples: list[TrainingSample], interval: int = 1,
                   masked: int = 0) -> list[TrainingSample]:
    """``samples`` with :func:`env_reward_scale` set on the designer's (``advantage_scale``).
    ``masked``: the designs the estimator kept out of ``samples``; they count among the designs,
    as the reference counts them (before dropping the masked ones), so that masking one design
    does not enlarge the others' advantages."""
    agents = sum(1 for s in samples if s.role == Role.AGENT)
    designs = sum(1 for s in samples if s.role == Role.DESIGNER) + masked
    scale = env_reward_scale(loop, agents, designs, interval)
    for sample in samples:
        if sample.role == Role.DESIGNER:
            sample.meta["advantage_scale"] = scale
    return samples


def hold_designs(trainer: Any, loop: LoopSection, iteration: int,
                proposals: list[Proposal], ledger: dict[str, Any] | None = None) -> Window:
    """The window starting at ``iteration``: the environments played, and the designer's
    samples held with the log-probabilities the policy gives them now (before any update). With
    a ``ledger`` (asynchronous training, the trainer busy on its own thread) they are held with
    the log-probabilities the backend generated them with instead."""
    held = designer_samples(loop, [p for p in proposals if not p.replayed])
    if ledger is not None:
        stamp_samples(held, ledger, iteration, 0)
        logps = None
    else:
        logps = trainer.record_logprobs(held) if held else None
    designs = [HeldDesign(env_id=s.group, family_name=str(s.meta["family_name"]),
                          messages=s.messages,
                          skill=str(s.meta["skill"]),
                          rollout_logps=logps[k] if logps is not None else None,
                          fixed_reward=None if s.meta["played"] else float(s.reward),
                          meta={k: v for k, v in s.meta.items()
                                if k in ("attempt", "repair", "temperature",
                                         "chat_template_kwargs", "turn_logps")})
               for k, s in enumerate(held)]
    return Window(start=iteration, designs=designs,
                  env_ids=[p.env_id for p in proposals if p.difficulty is not None])


def delayed_reward(estimator: DifficultyEstimator, design: HeldDesign, record: EnvRecord | None,
                   window: Window, success_threshold: float,
                   label: str = "", timeouts: str = "start",
                   skill_means: Sequence[float] = ()) -> tuple[float, dict, bool]:
    """A held design's reward over its window's plays (``record``: its environment's memory
    record, with one history entry per iteration played), its figures and whether the designer
    is trained on it (``Difficulty.train``): the estimator sees the hinted plays of the window's
    start, the unhinted plays played alongside them, and every iteration of the window;
    ``timeouts`` (``loop.timeouts``) says which timeouts count (:func:`window_timeouts`);
    ``skill_means``: the design's skill's mean per window (``difficulty.skill_window_means``). A
    design whose environment was never played gets 0, and is trained."""
    if design.fixed_reward is not None:
        return design.fixed_reward, {}, True
    plays = [h for h in record.history if h.iteration >= window.start] if record else []
    if not plays:
        return 0.0, {}, True
    first = plays[0]
    difficulty = checked_estimate(estimator, EstimateInput(
        env=EnvProgram(source=record.source, family=design.family_name, doc_id=record.doc_id),
        hinted=first.hinted, unhinted=first.unhinted, iteration=plays[-1].iteration,
        history=[h for h in record.history if h.iteration < window.start],
        success_threshold=success_threshold, window=plays,
        step_timeouts=window_timeouts(plays, window.start, timeouts),
        skill_means=skill_means), label)
    return float(difficulty.designer_reward), dict(difficulty.figures), difficulty.train


@dataclass
class Delayed:
    """One played design's delayed reward, as released: what ``envs/<id>.json`` (``delayed``)
    and the memory's history (``delayed_*`` figures of the window's first entry) keep."""

    env_id: str
    window_start: int
    designer_reward: float
    figures: dict[str, float]
    #: Whether the designer was trained on it (``False``: the estimator masked it).
    trained: bool

    def as_figures(self) -> dict[str, float]:
        """The memory's form: ``delayed_designer_reward``, ``delayed_trained`` and every figure
        as ``delayed_<name>``."""
        return ({"delayed_designer_reward": self.designer_reward,
                 "delayed_trained": float(self.trained)}
                | {f"delayed_{k}": float(v) for k, v in self.figures.items()})


def release(estimator: DifficultyEstimator, memory: EnvMemory, window: Window,
            success_threshold: float, label: str = "", timeouts: str = "start",
            interval: int = 1) -> tuple[list[TrainingSample], list[Delayed]]:
    """The window's designer samples, each rewarded over the window (see
    :func:`delayed_reward`; ``interval``: the regeneration interval, for per-skill means);
    ``meta`` keeps the generation-time log-probs for the trainer and the delayed reward's figures
    (``window_figures``). A design the estimator masks (``Difficulty.train`` false: the
    reference's negative blend, ``proposer_masked``) is not trained. Every played design's
    delayed reward is returned too, and added to its window's first history entry in the memory
    (:meth:`~spade_core.interfaces.EnvMemory.add_figures`)."""
    means = (skill_window_means(memory.records(), interval, window.start // interval)
             if estimator.uses_skill_means else {})
    samples, delayed = [], []
    for design in window.designs:
        record = memory.get(design.env_id)
        reward, figures, train = delayed_reward(estimator, design, record, window,
                                                success_threshold, label, timeouts,
                                                means.get(design.skill, ()))
        if design.fixed_reward is None and record is not None:
            delayed.append(Delayed(design.env_id, window.start, reward, figures, train))
            memory.add_figures(design.env_id, window.start, delayed[-1].as_figures())
        if not train:
            continue
        meta = dict(design.meta) | {"skill": design.skill, "window_start": window.start,
                                    "rollout_logps": design.rollout_logps,
                                    "window_figures": figures}
        samples.append(TrainingSample(role=Role.DESIGNER, messages=design.messages,
                                      reward=reward, group=design.env_id, meta=meta))
    return samples, delayed

