"""The actor side of the ``ray`` sandbox: :class:`SandboxHost`, one per Ray actor.

Each actor runs the ``process`` sandbox (its fork servers, isolation and limits unchanged) on its
node and hosts sessions for the driver, addressed by integer ids. Programs and family sources
arrive once per actor and are cached by their sha256; later opens send the hash only. Nothing
here imports Ray: ``ray_sandbox.py`` wraps this class with ``ray.remote``, so it is also usable
(and testable) as a plain object.

Replies never raise for anything a program does: each item is ``("ok", value)``,
``("error", verdict)`` (the session failed; the verdict as the process sandbox gave it) or
``("lost", reason)`` (this actor does not know the session: it was restarted since).
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from spade_core.errors import SandboxError

from sandbox.limits import Limits

#: Programs (and family sources) an actor keeps by hash; the driver re-sends one evicted since.
PROGRAM_CACHE = 4096


@dataclass(frozen=True)
class FamilySources:
    """What the process sandbox reads from a family when it opens a program: its trusted prelude,
    importable modules and the libraries the prelude imports (shipped instead of the family)."""

    prelude: str = ""
    modules: dict[str, str] = field(default_factory=dict)
    preload_imports: tuple[str, ...] = ()


class SandboxHost:
    """A ``process`` sandbox and the sessions it hosts for one driver."""

    def __init__(self, sandbox_options: dict[str, Any]) -> None:
        from sandbox.build import build_sandbox
        from sandbox.options import ProcessSandboxOptions

        self.options = ProcessSandboxOptions(**sandbox_options)
        self.sandbox = build_sandbox(self.options)
        #: Changes whenever the actor (re)starts: sessions of another epoch are lost.
        self.epoch = uuid.uuid4().hex
        self.lock = threading.Lock()
        self.sessions: dict[int, Any] = {}
        self.next_id = 1
        self.programs: OrderedDict[str, str] = OrderedDict()
        self.families: OrderedDict[str, FamilySources] = OrderedDict()
        #: How often each program text arrived (the driver sends each once per actor).
        self.received: Counter[str] = Counter()

    # -- bookkeeping --------------------------------------------------------------------------
    def hello(self) -> dict[str, Any]:
        """Who this actor is: its epoch, node and process (the driver's liveness check)."""
        return {"epoch": self.epoch, "host": socket.gethostname(), "pid": os.getpid(),
                "sessions": len(self.sessions)}

    def isolation(self) -> dict[str, Any]:
        return self.sandbox.isolation()

    def stats(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "sessions": len(self.sessions),
                "programs": len(self.programs), "received": dict(self.received)}

    def _remember(self, cache: OrderedDict, sha: str, value: Any) -> None:
        with self.lock:
            cache[sha] = value
            cache.move_to_end(sha)
            while len(cache) > PROGRAM_CACHE:
                cache.popitem(last=False)

    def _lookup(self, cache: OrderedDict, sha: str) -> Any:
        with self.lock:
            value = cache.get(sha)
            if value is not None:
                cache.move_to_end(sha)
            return value

    # -- sessions -----------------------------------------------------------------------------
    def open_many(self, sha: str, program: str | None, family_sha: str | None,
                  family: FamilySources | None, count: int, limits: Limits | None
                  ) -> tuple[str, Any]:
        """``count`` instances of the program ``sha`` (its text when the driver believes this
        actor lacks it): ``("ok", [(id, env_class), ...])``, ``("error", verdict)``, or
        ``("missing", what)`` when a hash is unknown here (the driver re-sends the text)."""
        if program is not None:
            self.received[sha] += 1
            self._remember(self.programs, sha, program)
        else:
            program = self._lookup(self.programs, sha)
            if program is None:
                return "missing", "program"
        if family_sha is not None:
            if family is not None:
                self._remember(self.families, family_sha, family)
            else:
                family = self._lookup(self.families, family_sha)
                if family is None:
                    return "missing", "family"
        try:
            opened = self.sandbox.open_many(program, count, family=family, limits=limits)
        except SandboxError as exc:
            return "error", exc.verdict
        with self.lock:
            ids = list(range(self.next_id, self.next_id + len(opened)))
            self.next_id += len(opened)
            self.sessions.update(zip(ids, opened))
        return "ok", [(sid, session.env_class) for sid, session in zip(ids, opened)]

    def _session(self, sid: int) -> Any:
        with self.lock:
            return self.sessions.get(sid)

    def call(self, sid: int, op: str, arg: Any = None) -> tuple[str, Any]:
        """One ``reset``/``step``/``solution`` of session ``sid``."""
        session = self._session(sid)
        if session is None:
            return "lost", f"session {sid} is unknown to actor epoch {self.epoch}"
        try:
            if op == "reset":
                return "ok", session.reset(arg)
            if op == "step":
                return "ok", session.step(arg)
            if op == "solution":
                return "ok", session.solution()
        except SandboxError as exc:
            return "error", exc.verdict
        raise ValueError(f"unknown session call {op!r}")

    def _batched(self, items: list[tuple[int, Any]], method: Any) -> list[tuple[str, Any]]:
        replies: list[tuple[str, Any] | None] = [None] * len(items)
        known = []
        for pos, (sid, arg) in enumerate(items):
            session = self._session(sid)
            if session is None:
                replies[pos] = ("lost", f"session {sid} is unknown to actor epoch {self.epoch}")
            else:
                known.append((pos, session, arg))
        results = method([(session, arg) for _pos, session, arg in known]) if known else []
        for (pos, _session, _arg), result in zip(known, results, strict=True):
            replies[pos] = ("error", result.verdict) if isinstance(result, SandboxError) \
                else ("ok", result)
        return replies  # type: ignore[return-value]

    def reset_many(self, items: list[tuple[int, int | None]]) -> list[tuple[str, Any]]:
        """Batched ``reset``: the process sandbox's ``reset_many`` (one frame per worker)."""
        return self._batched(items, self.sandbox.reset_many)

    def step_many(self, items: list[tuple[int, str]]) -> list[tuple[str, Any]]:
        """Batched ``step``: the process sandbox's ``step_many`` (one frame per worker)."""
        return self._batched(items, self.sandbox.step_many)

    def close_sessions(self, sids: list[int]) -> None:
        """Close sessions (a program's ``close()`` errors are its last word, and ignored)."""
        with self.lock:
            sessions = [self.sessions.pop(sid) for sid in sids if sid in self.sessions]
        for session in sessions:
            try:
                session.close()
            except SandboxError:
                pass

    def shutdown(self) -> None:
        """Stop the fork servers (the driver calls this before letting the actor go)."""
        with self.lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            try:
                session.close()
            except SandboxError:
                pass
        self.sandbox.close()
