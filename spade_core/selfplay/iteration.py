"""One self-play iteration, as a flat list of named steps (each a function in a module named for
it, every component reached through its interface, so each can be swapped by config). The
schedule (``run.schedule``, frontier or window, :mod:`schedule`) is chosen at set-up; the steps
that differ between the two are its methods.

==========  ===========================================  ===================================
step        function                                     what it does
==========  ===========================================  ===================================
release     :meth:`Schedule.release`                     a window's start: the last window's
                                                         designs rewarded over their plays
design      :func:`design.design`                        the designer writes programs, each
                                                         chunk validated as the next generates
dedupe      :func:`dedupe.dedupe`                        mastered look-alikes refused
draw        :mod:`environments`                          instead of designing: a fixed pool's
                                                         draw, frontier replays, a window's own
hint        :func:`hinting.hint`                         sessions opened, first observations,
                                                         hints written
play        :func:`play.play`                            unhinted and hinted rollouts
estimate    :func:`estimate.estimate`                    each played environment's difficulty
reward      :func:`designer_reward.reward`               the designer's immediate reward
remember    :func:`remember.remember`                    the memory updated; mastered returned;
                                                         aged ones retired (frontier schedule)
samples     :meth:`Schedule.samples`                     what the trainer gets (designs held in
                                                         the window schedule)
train       :func:`train`                                one update
evaluate    :meth:`LoopEvaluator.evaluate`               held-out suites, every ``eval.every``
log         :func:`write_run_files` and :func:`log`      run files and the metrics row
==========  ===========================================  ===================================

The steps up to the samples are :func:`generate`; :func:`run_iteration` runs them, trains and
logs. Each step's time is its phase in the row's ``seconds`` (``sample``: the corpus draw of
the design step; ``draw``: the memory's frontier read). The asynchronous loop
(:mod:`~spade_core.selfplay.async_loop`) runs the same :func:`generate` on its thread and the
same :func:`train`, :func:`evaluate`, :func:`write_run_files` and :func:`log` as updates
finish. A proposal that fails at any step is recorded with why, and gets the configured designer
reward; it never stops the iteration.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from spade_core.interfaces import EnvRecord, Trainer, TrainingSample
from spade_core.phases import CountingBackend, PhaseTimer, tokens_by_role
from spade_core.records import EnvStatus
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.dedupe import dedupe
from spade_core.selfplay.design import design
from spade_core.selfplay.designer_reward import Delayed, reward
from spade_core.selfplay.environments import draw_from_pool, draw_replay, pool_choice
from spade_core.selfplay.estimate import estimate
from spade_core.selfplay.hinting import hint
from spade_core.selfplay.metrics import iteration_metrics
from spade_core.selfplay.pipeline import pipeline_figures
from spade_core.selfplay.play import play, play_sessions
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.remember import remember
from spade_core.selfplay.run_files import write_iteration
from spade_core.selfplay.schedule import Ledger
from spade_core.selfplay.setup import SelfPlayRun


@dataclass
class Made:
    """What :func:`generate` produced: the iteration's proposals (every step's outcome on them),
    its samples, the environments mastered and retired, and the window's designs released."""

    proposals: list[Proposal]
    samples: list[TrainingSample]
    mastered: list[EnvRecord] = field(default_factory=list)
    retired: list[EnvRecord] = field(default_factory=list)
    released: list[TrainingSample] = field(default_factory=list)
    delayed: list[Delayed] = field(default_factory=list)


def run_iteration(run: SelfPlayRun, iteration: int,
                  previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """One iteration: generate (release, design or draw, dedupe, hint, play, estimate, reward,
    remember, samples), train, evaluate, record and log; returns its metrics row. ``previous``:
    the previous iteration's ``pipeline`` figures, for this one's idle seconds."""
    timer = run.timer(iteration)
    started = time.time()
    made = generate(run, iteration, timer)
    ended = time.time()
    train_metrics = train(run.components.trainer, made.samples, timer)
    trained = time.time()
    held_out = evaluate(run, iteration, timer)
    row = write_run_files(run, iteration, made, timer, train_metrics)
    row["pipeline"] = pipeline_figures(
        started, ended, started - previous["generate_end"] if previous else 0.0, ended, trained,
        previous["train_end"] if previous else None, 0)
    if held_out is not None:
        row["eval"] = held_out
    log(run, iteration, row)
    return row


def generate(run: SelfPlayRun, iteration: int, timer: PhaseTimer,
             ledger: Ledger | None = None) -> Made:
    """The iteration up to its samples. ``ledger`` (asynchronous training): takes the backend's
    record of what it generated, for the designs a window holds."""
    loop, schedule, seed = run.loop, run.schedule, run.seed(iteration)
    fresh = schedule.starts(iteration)
    c = counted(run.components, timer)

    released, delayed = schedule.release(c, loop, fresh)
    proposals = environments(run, c, iteration, fresh, timer)
    with play_sessions(c, loop, proposals, hinted=fresh) as tables:
        hint(c, loop, tables, seed, timer)
        play(c, loop, tables, seed, timer)
    # The environments estimated: those played, their failed plays included (a rejected or
    # duplicate proposal is not, so a run that plays nothing shows "estimate: 0/0").
    estimated = sum(1 for p in proposals if p.played)
    with timer.phase("estimate", total=estimated):
        estimate(c, loop, proposals, iteration)
        timer.advance("estimate", estimated)
    reward(loop, proposals)
    with timer.phase("remember", total=len(proposals)):
        mastered = remember(c, proposals, iteration)
        retired = schedule.retire(c, loop, proposals)
        timer.advance("remember", len(proposals))
    announce(run, proposals, mastered)
    samples = schedule.samples(c.trainer, loop, iteration, proposals, fresh, released, delayed,
                               ledger)
    return Made(proposals, samples, mastered, retired, released, delayed)


def environments(run: SelfPlayRun, c: Components, iteration: int, fresh: bool,
                 timer: PhaseTimer) -> list[Proposal]:
    """Steps design and dedupe, or draw: the iteration's environments. An iteration that starts
    no set plays the schedule's own again; a fixed pool's draw stands in for the designer; the
    schedule's frontier replays go beside a fresh set."""
    loop, schedule, seed = run.loop, run.schedule, run.seed(iteration)
    if not fresh:
        return schedule.again(c, loop)
    if run.pool is not None:
        return draw_from_pool(c, loop, seed, timer, replays=schedule.replays(loop),
                              chosen=pool_choice(run.pool, loop, iteration, schedule.interval,
                                                 run.resolved.config.run.seed))
    proposals = design(c, loop, iteration, seed, timer)
    dedupe(c, proposals, run.guard, timer)
    return proposals + draw_replay(c, loop, {p.env_id for p in proposals}, seed, timer,
                                   count=schedule.replays(loop))


def train(trainer: Trainer, samples: list[TrainingSample], timer: PhaseTimer) -> dict[str, Any]:
    """Step: train. The trainer's update on ``samples`` (``trainer: none`` changes nothing),
    timed as the ``train`` phase; its figures (``{}`` when it reports none)."""
    with timer.phase("train", total=len(samples)):
        figures = trainer.train(samples) or {}
        timer.advance("train", len(samples))
    return figures


def counted(c: Components, timer: PhaseTimer) -> Components:
    """``c`` with the policy's (and the hint model's) generations counted per phase, for the
    row's ``tokens``."""
    return replace(c, backend=CountingBackend(c.backend, timer),
                   hint_backend=(CountingBackend(c.hint_backend, timer)
                                 if c.hint_backend is not None else None))


def announce(run: SelfPlayRun, proposals: list[Proposal], mastered: list[EnvRecord]) -> None:
    """The plugins' events: each environment accepted (played or kept), each newly mastered."""
    for p in proposals:
        if p.status not in (EnvStatus.REJECTED, EnvStatus.DUPLICATE):
            stored = run.components.memory.get(p.env_id)
            if stored is not None:
                run.hook.spade_env_accepted(run_info=run.run_info, record=stored)
    for stored in mastered:
        run.hook.spade_env_mastered(run_info=run.run_info, record=stored)


def evaluate(run: SelfPlayRun, iteration: int, timer: PhaseTimer) -> dict[str, Any] | None:
    """Step: evaluate. The in-run held-out suites when ``eval.every`` says so (``None``: not
    this iteration, or no evaluator)."""
    if run.evaluator is None:
        return None
    return run.evaluator.evaluate(iteration, CountingBackend(run.components.backend, timer), timer)


def write_run_files(run: SelfPlayRun, iteration: int, made: Made, timer: PhaseTimer,
                    train_metrics: dict[str, Any] | None) -> dict[str, Any]:
    """Step: log, part one. The iteration's run files (``envs/<id>.json``, replays, delayed
    designer rewards) and its ``metrics.jsonl`` row, ``train`` as given (``{}`` until known)."""
    c, loop = run.components, run.loop
    write_iteration(run.artifacts, iteration, made.proposals, made.delayed)
    row = iteration_metrics(iteration, made.proposals, len(made.mastered), timer,
                            loop.success_threshold, retired=len(made.retired),
                            memory_counts=c.memory.stats().get("by_status", {}))
    row["train"] = train_metrics or {}
    row["tokens"] = tokens_by_role(timer)
    window = run.schedule.row(iteration, made.released)
    if window is not None:
        row["window"] = window
    row["corpus_state"] = c.corpus.state_dict()
    row["mode"] = loop.mode
    return row


def log(run: SelfPlayRun, iteration: int, row: dict[str, Any]) -> None:
    """Step: log, part two. The row appended to ``metrics.jsonl`` and the plugins told."""
    run.artifacts.log_metrics(row)
    run.hook.spade_iteration_end(run_info=run.run_info, iteration=iteration, metrics=row)
