"""A clean stop on SIGTERM: the run finishes the iteration in progress, writes a checkpoint and
ends with :class:`RunStopped`, so that ``spade run --resume`` continues where it stopped.

A second SIGTERM stops at once, as Ctrl-C does (``KeyboardInterrupt``); the run then continues
from its latest checkpoint. The handler is installed only on the main thread (Python delivers
signals there) and the previous one is put back when the run ends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spade_core.errors import SpadeError

#: The signals that ask for a clean stop.
STOP_SIGNALS = (signal.SIGTERM,)


class RunStopped(SpadeError):
    """The run stopped cleanly on a signal, with a checkpoint of every finished iteration.
    Exit status 143 (128 + SIGTERM), as a process ended by SIGTERM reports."""

    exit_code = 143


class StopRequest:
    """Whether a stop was asked for; :meth:`install` routes the signals here."""

    def __init__(self) -> None:
        self.requested = False
        self.signal_name = ""
        self._previous: dict[int, Any] = {}
        self._report: Callable[[str], None] = lambda message: None

    def install(self, report: Callable[[str], None]) -> None:
        """Handle :data:`STOP_SIGNALS` (main thread only; elsewhere nothing changes)."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._report = report
        for number in STOP_SIGNALS:
            self._previous[number] = signal.signal(number, self._handle)

    def uninstall(self) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous.clear()

    def _handle(self, number: int, frame: Any) -> None:
        name = signal.Signals(number).name
        if self.requested:  # asked twice: stop now, from the latest checkpoint
            self.uninstall()
            raise KeyboardInterrupt(f"a second {name}")
        self.requested, self.signal_name = True, name
        self._report(f"spade: {name} received: the run stops after the iteration in progress, "
                     f"with a checkpoint (send {name} again to stop at once)")

    def stopped(self, completed: int, run_dir: Path) -> RunStopped:
        """The error that ends a run stopped after ``completed`` iterations."""
        return RunStopped(
            f"stopped by {self.signal_name or 'a signal'} after {completed} iteration"
            f"{'' if completed == 1 else 's'}: checkpoint iter-{completed:06d} is in "
            f"{Path(run_dir) / 'checkpoints'}; continue with `spade run --resume {run_dir}`")
