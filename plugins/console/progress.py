"""Live progress bars, one per phase of the running iteration (rich), fed by run events.

Bars are drawn only on an interactive terminal (a log file gets the per-iteration table alone);
``SPADE_PROGRESS=1`` forces them, ``SPADE_PROGRESS=0`` turns them off. They are transient: when
an iteration ends they vanish and the iteration's table is printed in their place.
"""

from __future__ import annotations

import os
import threading
from typing import Any

ENV_SWITCH = "SPADE_PROGRESS"

#: What each built-in phase counts (bars appear in the order the phases start).
UNITS = {"sample": "docs", "design": "prompts", "validate": "programs", "dedupe": "envs",
         "hint": "envs", "rollout": "episodes", "estimate": "envs", "train": "samples"}


def wanted(console: Any) -> bool:
    """Whether to draw bars on ``console``: the switch if set, else whether it is a terminal."""
    value = os.environ.get(ENV_SWITCH, "").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    return bool(getattr(console, "is_terminal", False))


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
