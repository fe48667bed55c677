"""The designer's reward on its way to its samples, in one place: a proposal that was not played
earns its verdict's reward; in the frontier schedule a played design's reward is the estimate of
its iteration; in the window schedule a design is held with its generation-time log-probabilities
and rewarded over its whole window when the next window starts (released); either way the
designer's advantages are scaled by the agent samples one design stands for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from spade_core.config.schema import LoopSection
from spade_core.interfaces import (
    DifficultyEstimator,
    EnvMemory,
    EnvRecord,
    EstimateInput,
    TrainingSample,
)
from spade_core.records import EnvProgram, Role
from spade_core.selfplay.estimate import checked_estimate, failure_reward, skill_window_means
from spade_core.selfplay.pipeline import stamp_samples
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.window import HeldDesign, Window, Windows, window_timeouts

if TYPE_CHECKING:
    from spade_core.selfplay.setup import Components


def template_meta(loop: LoopSection, role: Literal["designer", "agent"]) -> dict[str, Any]:
    """``chat_template_kwargs`` in a sample's meta when its role set any, so that the trainer
    renders the conversation as generation did."""
    kwargs = loop.template_kwargs(role)
    return {"chat_template_kwargs": kwargs} if kwargs else {}


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
                      "skill": p.target.skill or p.family.name, "family": p.family.name,
                      "played": last and p.difficulty is not None}))
    return samples


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
    designs = [HeldDesign(env_id=s.group, family=str(s.meta["family"]), messages=s.messages,
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
                   skill_means: Sequence[float] = ()) -> tuple[float, dict]:
    """A held design's reward over its window's plays (``record``: its environment's memory
    record, with one history entry per iteration played): the estimator sees the hinted plays
    of the window's start, the unhinted plays played alongside them, and every iteration of the
    window; ``timeouts`` (``loop.timeouts``) says which timeouts count (:func:`window_timeouts`);
    ``skill_means``: the design's skill's mean per window (``estimate.skill_window_means``). A design
    whose environment was never played gets 0."""
    if design.fixed_reward is not None:
        return design.fixed_reward, {}
    plays = [h for h in record.history if h.iteration >= window.start] if record else []
    if not plays:
        return 0.0, {}
    first = plays[0]
    difficulty = checked_estimate(estimator, EstimateInput(
        env=EnvProgram(source=record.source, family=design.family, doc_id=record.doc_id),
        hinted=first.hinted, unhinted=first.unhinted, iteration=plays[-1].iteration,
        history=[h for h in record.history if h.iteration < window.start],
        success_threshold=success_threshold, window=plays,
        step_timeouts=window_timeouts(plays, window.start, timeouts),
        skill_means=skill_means), label)
    return float(difficulty.designer_reward), dict(difficulty.figures)


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
    (``window_figures``). A design the estimator masks (figure ``masked`` 1: the reference's
    negative blend, ``proposer_masked``) is not trained. Every played design's delayed reward is
    returned too, and added to its window's first history entry in the memory
    (:meth:`~spade_core.interfaces.EnvMemory.add_figures`)."""
    means = (skill_window_means(memory.records(), interval, window.start // interval)
             if estimator.uses_skill_means else {})
    samples, delayed = [], []
    for design in window.designs:
        record = memory.get(design.env_id)
        reward, figures = delayed_reward(estimator, design, record, window,
                                         success_threshold, label, timeouts,
                                         means.get(design.skill, ()))
        masked = bool(figures.get("masked"))
        if design.fixed_reward is None and record is not None:
            delayed.append(Delayed(design.env_id, window.start, reward, figures, not masked))
            memory.add_figures(design.env_id, window.start, delayed[-1].as_figures())
        if masked:
            continue
        meta = dict(design.meta) | {"skill": design.skill, "window_start": window.start,
                                    "rollout_logps": design.rollout_logps,
                                    "window_figures": figures}
        samples.append(TrainingSample(role=Role.DESIGNER, messages=design.messages,
                                      reward=reward, group=design.env_id, meta=meta))
    return samples, delayed


def release_window(c: "Components", loop: LoopSection, windows: Windows | None,
                   starting: bool) -> tuple[list[TrainingSample], list[Delayed]]:
    """Step: release. At a window's start, the last window's designs rewarded over its plays
    (:func:`release`); nothing otherwise, and nothing in the frontier schedule."""
    if windows is None or not starting or windows.current is None:
        return [], []
    return release(c.estimator, c.memory, windows.current, loop.success_threshold,
                   c.estimator_label, loop.timeouts, windows.interval)
