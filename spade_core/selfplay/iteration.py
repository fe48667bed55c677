"""One self-play iteration, as a flat list of named steps (each a function in a module named for
it, every component reached through its interface, so each can be swapped by config):

==========  ===========================================  ===================================
step        function                                     what it does
==========  ===========================================  ===================================
release     :func:`designer_reward.release_window`       a window's start: the last window's
                                                         designs rewarded over their plays
design      :func:`design.design`                        the designer writes programs, each
                                                         chunk validated as the next generates
dedupe      :func:`dedupe.dedupe`                        mastered look-alikes refused
draw        :mod:`environments`                          instead of designing: a fixed pool's
                                                         draw, frontier replays, a window's own
hint        :func:`hinting.hint`                         sessions opened, first observations,
                                                         hints written
play        :func:`play.play`                            unhinted and hinted rollouts
estimate    :func:`estimate.estimate`                    difficulty and the designer's reward
remember    :func:`remember.remember`                    the memory updated; mastered returned
samples     :func:`samples.build_samples`                what the trainer gets (designs held in
                                                         the window schedule)
train       :func:`train.train`                          one update
evaluate    :meth:`LoopEvaluator.evaluate`               held-out suites, every ``eval.every``
log         :func:`record` and :func:`log`               run files and the metrics row
==========  ===========================================  ===================================

The first ten steps are :func:`generate`; :func:`run_iteration` runs them, trains and logs. The
asynchronous loop (:mod:`~spade_core.selfplay.async_loop`) runs the same :func:`generate` on its
thread and the same :func:`train`, :func:`evaluate`, :func:`record` and :func:`log` as updates
finish. A proposal that fails at any step is recorded with why, and gets the configured designer
reward; it never stops the iteration.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from spade_core.interfaces import EnvRecord, TrainingSample
from spade_core.phases import CountingBackend, PhaseTimer, tokens_by_role
from spade_core.records import EnvStatus
from spade_core.selfplay.dedupe import dedupe
from spade_core.selfplay.design import design
from spade_core.selfplay.designer_reward import Delayed, release_window
from spade_core.selfplay.environments import (
    draw_from_pool,
    draw_replay,
    pool_choice,
    retire_aged,
    window_replays,
)
from spade_core.selfplay.estimate import estimate, played
from spade_core.selfplay.hinting import hint
from spade_core.selfplay.metrics import iteration_metrics, window_metrics
from spade_core.selfplay.pipeline import pipeline_figures
from spade_core.selfplay.play import play, play_sessions
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.remember import remember
from spade_core.selfplay.run_files import write_iteration
from spade_core.selfplay.samples import build_samples
from spade_core.selfplay.setup import Components, SelfPlayRun
from spade_core.selfplay.train import train


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
    """One iteration: generate (release, design or draw, dedupe, hint, play, estimate,
    remember, samples), train, evaluate, record and log; returns its metrics row. ``previous``:
    the previous iteration's ``pipeline`` figures, for this one's idle seconds."""
    timer = run.timer(iteration)
    started = time.time()
    made = generate(run, iteration, timer)
    ended = time.time()
    train_metrics = train(run.components.trainer, made.samples, timer)
    trained = time.time()
    held_out = evaluate(run, iteration, timer)
    row = record(run, iteration, made, timer, train_metrics)
    row["pipeline"] = pipeline_figures(
        started, ended, started - previous["generate_end"] if previous else 0.0, ended, trained,
        previous["train_end"] if previous else None, 0)
    if held_out is not None:
        row["eval"] = held_out
    log(run, iteration, row)
    return row


def generate(run: SelfPlayRun, iteration: int, timer: PhaseTimer,
             ledger: Callable[[], dict[str, Any]] | None = None) -> Made:
    """The iteration up to its samples. ``ledger`` (asynchronous training): takes the backend's
    record of what it generated, for the designs a window holds."""
    loop, windows, seed = run.loop, run.windows, run.seed(iteration)
    starting = windows is None or windows.starts(iteration)
    c = counted(run.components, timer)

    released, delayed = release_window(c, loop, windows, starting)
    if not starting:
        proposals = window_replays(c, windows.current.env_ids, windows.current.start,
                                   drop_timed_out=loop.timeouts == "start")
    elif run.pool is not None:
        interval = windows.interval if windows is not None else None
        proposals = draw_from_pool(c, loop, seed, timer, replays=windows is None,
                                   chosen=pool_choice(run.pool, loop, iteration, interval,
                                                      run.resolved.config.run.seed))
    else:
        proposals = design(c, loop, iteration, seed, timer)
        dedupe(c, proposals, run.guard, timer)
        if windows is None:
            proposals += draw_replay(c, loop, {p.env_id for p in proposals}, seed, timer)
    with play_sessions(c, loop, proposals, hinted=starting) as tables:
        hint(c, loop, tables, seed, timer)
        play(c, loop, tables, seed, timer)
    # The environments estimated: those played, their failed plays included (a rejected or
    # duplicate proposal is not, so a run that plays nothing shows "estimate: 0/0").
    estimated = sum(1 for p in proposals if played(p))
    with timer.phase("estimate", total=estimated):
        estimate(c, loop, proposals, iteration)
        mastered = remember(c, proposals, iteration)
        retired = retire_aged(c, loop, proposals) if windows is None else []
        timer.advance("estimate", estimated)
    announce(run, proposals, mastered)
    samples = build_samples(c.trainer, loop, iteration, proposals, windows, starting, released,
                            ledger, masked=sum(not d.trained for d in delayed))
    return Made(proposals, samples, mastered, retired, released, delayed)


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
                run.hook.spade_env_accepted(run=run.info, record=stored)
    for stored in mastered:
        run.hook.spade_env_mastered(run=run.info, record=stored)


def evaluate(run: SelfPlayRun, iteration: int, timer: PhaseTimer) -> dict[str, Any] | None:
    """Step: evaluate. The in-run held-out suites when ``eval.every`` says so (``None``: not
    this iteration, or no evaluator)."""
    if run.evaluator is None:
        return None
    return run.evaluator.evaluate(iteration, CountingBackend(run.components.backend, timer), timer)


def record(run: SelfPlayRun, iteration: int, made: Made, timer: PhaseTimer,
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
    if run.windows is not None:
        row["window"] = window_metrics(run.windows.current, iteration, made.released)
    row["corpus_state"] = c.corpus.state_dict()
    row["mode"] = loop.mode
    return row


def log(run: SelfPlayRun, iteration: int, row: dict[str, Any]) -> None:
    """Step: log, part two. The row appended to ``metrics.jsonl`` and the plugins told."""
    run.artifacts.log_metrics(row)
    run.hook.spade_iteration_end(run=run.info, iteration=iteration, metrics=row)
