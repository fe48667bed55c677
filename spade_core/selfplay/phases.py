"""Phases of an iteration: seconds spent in each (``metrics.jsonl``) and live progress (events).

A phase may be entered several times (one ``design`` and ``validate`` per attempt); its seconds
and its item counts add up. Progress is reported as ``(phase, completed, total)`` to an optional
callback, which the runner turns into the ``spade_phase_progress`` run event (the console plugin
draws rich progress bars from it). Work done on background threads (validation overlapping
generation) reports through the same object, so every method is thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: ``(phase, completed, total)``; ``total`` is ``None`` while unknown.
ProgressCallback = Callable[[str, int, "int | None"], None]


class PhaseTimer:
    """Seconds and progress per phase."""

    def __init__(self, on_progress: ProgressCallback | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self.on_progress = on_progress
        self._lock = threading.Lock()
        self._completed: dict[str, int] = {}
        self._total: dict[str, int | None] = {}

    @contextmanager
    def phase(self, name: str, total: int | None = None) -> Iterator[None]:
        """Time a block of work on phase ``name`` that will complete ``total`` more items."""
        self.expect(name, total)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add_seconds(name, time.perf_counter() - start)
            self._emit(name)

    def expect(self, name: str, total: int | None) -> None:
        """Announce ``total`` more items of phase ``name`` (a bar appears, or grows)."""
        with self._lock:
            self._completed.setdefault(name, 0)
            known = self._total.get(name)
            self._total[name] = None if total is None and known is None else \
                (known or 0) + (total or 0)
        self._emit(name)

    def advance(self, name: str, count: int = 1) -> None:
        """``count`` more items of phase ``name`` are done."""
        with self._lock:
            self._completed[name] = self._completed.get(name, 0) + count
        self._emit(name)

    def add_seconds(self, name: str, seconds: float) -> None:
        with self._lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def _emit(self, name: str) -> None:
        if self.on_progress is None:
            return
        with self._lock:
            completed, total = self._completed.get(name, 0), self._total.get(name)
        self.on_progress(name, completed, total)
