"""Phases of an iteration: seconds spent in each (``metrics.jsonl``) and live progress (events).

A phase may be entered several times (one ``design`` and ``validate`` per attempt); its seconds
and its item counts add up. Progress is reported as ``(phase, completed, total)`` to an optional
callback, which the runner turns into the ``spade_phase_progress`` run event (the console plugin
draws rich progress bars from it). Work done on background threads (validation overlapping
generation) reports through the same object, so every method is thread-safe.

:class:`CountingBackend` counts the tokens a generation backend returns per phase (``tokens`` of
``metrics.jsonl``, by the role the phase generates for: designer, agent, hint, validator, eval), so
``spade experiment`` can report what each arm spent generating.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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
        #: Tokens generated per phase (:class:`CountingBackend`).
        self.tokens: dict[str, int] = {}
        self._open = threading.local()

    @contextmanager
    def phase(self, name: str, total: int | None = None) -> Iterator[None]:
        """Time a block of work on phase ``name`` that will complete ``total`` more items."""
        self.expect(name, total)
        start = time.perf_counter()
        stack = self._open.__dict__.setdefault("stack", [])
        stack.append(name)
        try:
            yield
        finally:
            stack.pop()
            self.add_seconds(name, time.perf_counter() - start)
            self._emit(name)

    def current(self) -> str | None:
        """The innermost phase open on this thread, ``None`` outside every phase."""
        stack = self._open.__dict__.get("stack")
        return stack[-1] if stack else None

    def add_tokens(self, count: int) -> None:
        """``count`` tokens generated in the current phase (``other`` outside every phase)."""
        name = self.current() or "other"
        with self._lock:
            self.tokens[name] = self.tokens.get(name, 0) + count

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


#: The role each phase generates for (``metrics.jsonl``'s ``tokens``).
PHASE_ROLES = {"design": "designer", "rollout": "agent", "hint": "hint", "validate": "validator",
               "eval": "eval"}


def tokens_by_role(timer: PhaseTimer) -> dict[str, int]:
    """The timer's generated tokens keyed by role (phases without a role keep their name)."""
    out: dict[str, int] = {}
    for phase, count in timer.tokens.items():
        role = PHASE_ROLES.get(phase, phase)
        out[role] = out.get(role, 0) + count
    return out


class CountingBackend:
    """A generation backend that passes every call to ``backend`` and adds the tokens of each
    completion to ``timer``'s current phase: the completion's token ids when the backend returns
    them, else its whitespace-separated words. Everything else is the wrapped backend's."""

    def __init__(self, backend: Any, timer: PhaseTimer) -> None:
        self.backend = backend
        self.timer = timer

    def generate(self, conversations: Any, **kwargs: Any) -> Any:
        generations = self.backend.generate(conversations, **kwargs)
        self.timer.add_tokens(sum(len(g.completion_ids) if g.completion_ids is not None
                                  else len(g.text.split()) for g in generations))
        return generations

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)
