"""Live progress of the running iteration, fed by run events: rich bars on a terminal, one plain
line per phase in a log file.

``SPADE_PROGRESS`` decides: unset, an interactive terminal gets bars and anything else (a log
file, a batch job, CI) gets lines such as ``iteration 0 design: 8/8 prompts (12.3 s)``; ``1``
forces the bars even without a terminal (drawn with terminal control codes, for a log viewed
with ``less -R`` or ``tail -f``); ``lines`` forces the lines; ``0`` turns both off (the
per-iteration table stays, see ``SPADE_LIVE_TABLE``). Bars are transient: when an iteration ends
they vanish and the iteration's table is printed in their place.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

ENV_SWITCH = "SPADE_PROGRESS"

#: What each built-in phase counts (bars appear in the order the phases start).
UNITS = {"sample": "docs", "design": "prompts", "validate": "programs", "dedupe": "envs",
         "draw": "envs", "hint": "envs", "rollout": "episodes", "estimate": "envs",
         "remember": "envs", "train": "samples"}

_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on", "bars")


def progress_mode(console: Any) -> str:
    """``bars``, ``lines`` or ``off`` for ``console``: the switch if set, else bars on an
    interactive terminal and lines anywhere else."""
    value = os.environ.get(ENV_SWITCH, "").strip().lower()
    if value in _OFF:
        return "off"
    if value in _ON:
        return "bars"
    if value == "lines":
        return "lines"
    return "bars" if getattr(console, "is_terminal", False) else "lines"


def make_progress(console: Any) -> PhaseBars | PhaseLines | None:
    """The progress display ``SPADE_PROGRESS`` and ``console`` call for (None: off)."""
    mode = progress_mode(console)
    if mode == "off":
        return None
    if mode == "lines":
        return PhaseLines(console)
    if not getattr(console, "is_terminal", False):  # forced: draw as on a terminal
        from rich.console import Console

        console = Console(file=console.file, width=console.width, force_terminal=True,
                          force_interactive=True)
    return PhaseBars(console)


class PhaseLines:
    """One line per phase of each iteration, for log files: printed when the phase has done
    every item it expected (again when more are expected and done: a repair turn's design), and
    at the iteration's end for phases that did not get there. Seconds are wall time since the
    phase's first event in the iteration (``metrics.jsonl`` has the exact time per phase)."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.lock = threading.Lock()
        self.iteration: int | None = None
        self.started: dict[str, float] = {}
        self.last: dict[str, tuple[int, int | None]] = {}
        self.printed: dict[str, tuple[int, int | None]] = {}

    def _line(self, phase: str, now: float) -> None:
        completed, total = self.last[phase]
        unit = UNITS.get(phase, "items")
        counts = f"{completed}/{total}" if total is not None else f"{completed}"
        self.console.print(f"iteration {self.iteration} {phase}: {counts} {unit} "
                           f"({now - self.started[phase]:.1f} s)", markup=False,
                           highlight=False, soft_wrap=True)
        self.printed[phase] = self.last[phase]

    def update(self, iteration: int, phase: str, completed: int, total: int | None,
               total_iterations: int | None = None) -> None:
        with self.lock:
            if self.iteration != iteration:
                self._flush()
                self.iteration = iteration
            now = time.monotonic()
            self.started.setdefault(phase, now)
            self.last[phase] = (completed, total)
            done = total is not None and completed >= total  # a phase with no work: at once
            if done and self.printed.get(phase) != self.last[phase]:
                self._line(phase, now)

    def _flush(self) -> None:
        now = time.monotonic()
        for phase in self.last:
            if self.printed.get(phase) != self.last[phase]:
                self._line(phase, now)
        self.started, self.last, self.printed = {}, {}, {}

    def stop(self) -> None:
        """The iteration (or the run) ended: the phases not yet printed get their line."""
        with self.lock:
            self._flush()


class PhaseBars:
    """The bars of one run; thread-safe (phases report from worker threads too)."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.lock = threading.Lock()
        self.progress: Any = None
        self.tasks: dict[str, Any] = {}
        self.iteration: int | None = None

    def _start(self, iteration: int, total_iterations: int | None) -> None:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn)

        self.progress = Progress(
            TextColumn("[bold]{task.description:<9}"), BarColumn(bar_width=30),
            MofNCompleteColumn(), TextColumn("{task.fields[unit]}"), TimeElapsedColumn(),
            console=self.console, transient=True, refresh_per_second=4)
        self.progress.start()
        self.iteration = iteration
        self.tasks = {}
        of = f" of {total_iterations}" if total_iterations else ""
        self.progress.console.print(f"[dim]iteration {iteration}{of}[/dim]", highlight=False)

    def update(self, iteration: int, phase: str, completed: int, total: int | None,
               total_iterations: int | None = None) -> None:
        with self.lock:
            if self.progress is None or self.iteration != iteration:
                self.stop()
                self._start(iteration, total_iterations)
            task = self.tasks.get(phase)
            if task is None:
                task = self.progress.add_task(phase, total=total, completed=completed,
                                              unit=UNITS.get(phase, ""))
                self.tasks[phase] = task
            else:
                self.progress.update(task, completed=completed, total=total)
            if total is not None and completed >= total:
                self.progress.stop_task(task)

    def stop(self) -> None:
        """Remove the bars (the end of an iteration or of the run)."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
            self.tasks = {}
