"""Workers kept after their last instance closed, for a later ``open_many`` of the same program.

The self-play loop opens one program several times: validation (three instances), then its
plays in each iteration of its window (``1 + rollouts + hint plays`` instances). Forking a worker
for each costs more than the work done in it for a small program (a fork, about a thousand
copy-on-write page faults, the confinement, and a request to the fork server). A worker spawned
with ``reuse`` may instead, once every instance it hosted is closed, wait here, and load fresh
instances of its program on request (``more``): fresh module globals, classes, ``random`` and
``decimal`` context per instance, as in a new worker. A worker only ever hosts one program (same
source, family prelude and modules, limits), so reuse adds no sharing that several instances of
one ``open_many`` do not already have. A worker whose instance ended in a worker-wide failure
(timeout, memory, a guard, a crash) is never kept.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sandbox.executors import WorkerChannel
from sandbox.limits import Limits

#: Most instances a reusable worker loads over its life; its ``RLIMIT_CPU`` counts that many
#: instances (the per-call CPU limits, which the host enforces, are unchanged).
REUSE_INSTANCES = 64


@dataclass
class IdleWorker:
    """A kept worker: its channel, its CPU seconds at its last reply (where the next call's
    clock starts) and how many instances it has loaded so far (the next one's number)."""

    channel: WorkerChannel
    cpu: float
    hosted: int


def program_key(program: str, prelude: str, modules: dict[str, str],
                imports: tuple[str, ...], limits: Limits) -> str:
    """What a worker must share with an ``open_many`` to serve it: the program, the family's
    trusted sources and imports, and the limits it was confined with."""
    text = json.dumps([program, prelude, sorted(modules.items()), list(imports),
                       limits.to_dict()], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def end_channel(channel: WorkerChannel) -> None:
    """Kill a worker and close its channel (its fork server reaps it)."""
    try:
        channel.kill()
    finally:
        channel.close()


class IdleWorkers:
    """At most ``size`` kept workers, the least recently kept ended first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._by_key: OrderedDict[str, list[IdleWorker]] = OrderedDict()
        self._count = 0
        self._closed = False

    def put(self, key: str, worker: IdleWorker) -> bool:
        """Keep ``worker``; ``False`` (the caller ends it) when none may be kept."""
        if worker.hosted >= REUSE_INSTANCES:
            return False
        evicted: list[IdleWorker] = []
        with self._lock:
            if self._closed or self.size <= 0:
                return False
            self._by_key.setdefault(key, []).append(worker)
            self._by_key.move_to_end(key)
            self._count += 1
            while self._count > self.size:
                oldest, kept = next(iter(self._by_key.items()))
                evicted.append(kept.pop(0))
                self._count -= 1
                if not kept:
                    del self._by_key[oldest]
        for old in evicted:
            end_channel(old.channel)
        return True

    def take(self, key: str, count: int) -> IdleWorker | None:
        """A kept worker of ``key`` with room for ``count`` more instances, or ``None``."""
        with self._lock:
            kept = self._by_key.get(key)
            if not kept:
                return None
            worker = kept.pop()
            self._count -= 1
            if not kept:
                del self._by_key[key]
        if worker.hosted + count > REUSE_INSTANCES:
            end_channel(worker.channel)
            return None
        return worker

    def clear(self, final: bool = False) -> None:
        """End every kept worker (``final``: and keep none from now on)."""
        with self._lock:
            workers = [w for kept in self._by_key.values() for w in kept]
            self._by_key.clear()
            self._count = 0
            self._closed = self._closed or final
        for worker in workers:
            end_channel(worker.channel)

    def __len__(self) -> int:
        return self._count

    def describe(self) -> dict[str, Any]:
        return {"idle_workers": self.size, "instances_per_worker": REUSE_INSTANCES}
