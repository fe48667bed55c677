"""The iterations with ``loop.async_level`` K above 0: iteration i+1 is generated on this thread
while iteration i trains on the trainer's, generation waiting only when the trainer is more than K
updates behind. The steps are the synchronous iteration's own
(:mod:`~spade_core.selfplay.iteration`: :func:`generate`, then :func:`write_run_files` at once,
:func:`evaluate` and :func:`log` when the update is done). Rows are written in order; a checkpoint
waits for the trainer to finish everything before the iteration just generated, which it keeps,
untrained, to train first on resume."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from spade_core.phases import tokens_by_role
from spade_core.selfplay.iteration import evaluate, generate, log, write_run_files
from spade_core.selfplay.metrics import TOTALS, iteration_line
from spade_core.selfplay.pipeline import (
    BackgroundTrainer,
    Generated,
    Trained,
    VersionedBackend,
    pipeline_metrics,
    stamp_samples,
)
from spade_core.selfplay.setup import Reporter, SelfPlayRun
from spade_core.selfplay.stop import StopRequest

Checkpoint = Callable[..., None]


class AsyncLoop:
    """Runs iterations ``start`` to ``loop.run.iterations`` with training in the background."""

    def __init__(self, run: SelfPlayRun, totals: dict[str, float], report: Reporter,
                 version: int, checkpoint: Checkpoint, stop: StopRequest | None = None) -> None:
        self.run, self.totals, self.report = run, totals, report
        self.checkpoint, self.stop = checkpoint, stop
        self.level = run.loop.async_level
        backend = run.components.backend
        self.backend = backend if isinstance(backend, VersionedBackend) else None
        if self.backend is not None:
            self.backend.mark(version)
            self.backend.take_ledger()  # pushes and calls of the restore are no samples
        self.trainer = BackgroundTrainer(run.components.trainer, self.backend, self.level,
                                         version)
        self.completed = 0
        self._train_end: float | None = None
        self._generate_end: float | None = None

    def iterate(self, start: int, pending: Generated | None) -> None:
        config = self.run.resolved.config
        every, last = config.checkpoint.every, config.run.iterations
        self.completed = pending.iteration if pending is not None else start
        try:
            if pending is not None:
                self.trainer.submit(pending)
            for iteration in range(start, last):
                if self.stop is not None and self.stop.requested:  # SIGTERM: train what is
                    last = iteration  # generated, checkpoint it, stop
                    every = every or 1
                    break
                self.run.run_info.iteration = iteration
                self._finish(self.trainer.collect(keep=self.level)[0])
                generated = self._generate(iteration)
                for key in TOTALS:
                    self.totals[key] = self.totals.get(key, 0) + generated.row[key]
                if every and (iteration + 1) % every == 0 and iteration + 1 < last:
                    self._finish(self.trainer.collect(keep=0)[0])
                    self.checkpoint(iteration + 1, config.checkpoint.keep,
                                    pending=generated, version=self.trainer.version)
                self.trainer.submit(generated)
            self._finish(self.trainer.collect(keep=0)[0])
            if every and last > start:
                self.checkpoint(last, max(config.checkpoint.keep, 1), pending=None,
                                version=self.trainer.version)
        finally:
            self.trainer.close()

    def _generate(self, iteration: int) -> Generated:
        run = self.run
        timer = run.timer(iteration)
        started = time.time()
        floor = self.backend.version if self.backend is not None else self.trainer.version
        book: dict[str, Any] = {}

        def ledger() -> dict[str, Any]:  # what the backend generated so far this iteration
            if self.backend is not None:
                book.update(self.backend.take_ledger())
            return book

        made = generate(run, iteration, timer, ledger)
        stamp_samples(made.samples, ledger(), iteration, floor)
        row = write_run_files(run, iteration, made, timer, None)
        ended = time.time()
        waited = started - self._generate_end if self._generate_end is not None else 0.0
        self._generate_end = ended
        return Generated(iteration, made.samples, row, started=started, ended=ended,
                         waited=waited)

    def _finish(self, done: list[Trained]) -> None:
        """Write the rows of iterations whose update is done (evaluated now: in-run evaluation
        sees the weights of that update or a later one)."""
        run = self.run
        for trained in done:
            iteration = trained.generated.iteration
            row = trained.generated.row
            row["train"] = trained.metrics
            row["seconds"]["train"] = trained.ended - trained.started
            row["pipeline"] = pipeline_metrics(trained, self._train_end, self.level)
            self._train_end = trained.ended
            timer = run.timer(iteration)
            held_out = evaluate(run, iteration, timer)
            if held_out is not None:
                row["eval"] = held_out
                for role, count in tokens_by_role(timer).items():
                    row["tokens"][role] = row["tokens"].get(role, 0) + count
            log(run, iteration, row)
            self.completed = iteration + 1
            self.report(iteration_line(row))
