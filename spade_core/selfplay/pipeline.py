"""Asynchronous training (``loop.async_level: K``): iteration i+1 is generated while iteration i
trains, on weights at most K updates old.

Three pieces:

* :class:`VersionedBackend` stands between the loop and the generation backend. It counts the
  policy version the backend generates with (updates applied to its weights), serialises weight
  pushes with generation calls (a push waits for the call in flight, a call waits for the push:
  no call ever sees half-pushed weights) and keeps, per generated reply, the version and the
  log-probabilities the backend returned (:meth:`VersionedBackend.take_ledger`).
* :func:`stamp_samples` gives each sample of an iteration its id, its policy version (the oldest
  version any of its replies was generated with), the version of each reply and the backend's
  log-probabilities per reply (``meta["turn_logps"]``). A trainer that keeps the weights of
  recent versions (:meth:`~spade_core.interfaces.Trainer.keep_version`; ``grpo``) computes the
  behaviour log-probabilities itself under the weights each reply was generated with and
  corrects with truncated importance sampling, as it does a window's held designs; the
  backend's log-probabilities are then a diagnostic (engine against trainer), and the stand-in
  where no weights are kept.
* :class:`BackgroundTrainer` trains on one thread, in order; before each update it drops the
  samples older than K updates and measures staleness; it records when it was busy, and the
  loop records when generation was, so that ``metrics.jsonl`` says how long each side waited
  for the other (``pipeline``).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import (
    Generation,
    GenerationBackend,
    TrainableBackend,
    TrainablePolicy,
    Trainer,
    TrainingSample,
)

__all__ = ["BackgroundTrainer", "Generated", "Trained", "VersionedBackend", "pipeline_metrics",
           "reply_key", "stamp_samples", "versioned"]


def reply_key(conversation: Sequence[Mapping[str, Any]], text: str) -> str:
    """What identifies one generated reply: the conversation it answered and its text."""
    blob = json.dumps(list(conversation), sort_keys=True, default=str) + "\x00" + text
    return hashlib.sha1(blob.encode("utf-8", "surrogatepass")).hexdigest()


class VersionedBackend(GenerationBackend):
    """The generation backend with a policy version and a ledger of what it generated."""

    def __init__(self, inner: GenerationBackend, version: int = 0) -> None:
        self.inner = inner
        #: Updates applied to the weights the backend generates with.
        self.version = version
        #: The version the update in progress will make (set by the trainer's side).
        self.updating = version + 1
        self.push_seconds = 0.0
        self._lock = threading.Lock()
        self._ledger: dict[str, tuple[int, list[float] | None]] = {}
        self._ledger_lock = threading.Lock()

    @property
    def batch_size(self) -> int | None:  # type: ignore[override]
        return self.inner.batch_size

    def generate(self, conversations: Sequence[list[dict[str, str]]], **kwargs: Any
                 ) -> list[Generation]:
        with self._lock:
            version = self.version
            out = self.inner.generate(conversations, **kwargs)
        with self._ledger_lock:
            for conversation, generation in zip(conversations, out):
                key = reply_key(conversation, generation.text)
                earlier = self._ledger.get(key)
                if earlier is None or earlier[0] > version:
                    self._ledger[key] = (version, generation.logprobs)
        return out

    def take_ledger(self) -> dict[str, tuple[int, list[float] | None]]:
        """The replies generated since the last call, by :func:`reply_key`; the ledger empties."""
        with self._ledger_lock:
            ledger, self._ledger = self._ledger, {}
        return ledger

    def mark(self, version: int) -> None:
        """The weights the backend generates with are now ``version`` updates old (an update
        that pushed nothing, a trainer that shares nothing, a restored checkpoint)."""
        with self._lock:
            self.version = version
            self.updating = self.version + 1

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class VersionedTrainableBackend(VersionedBackend, TrainableBackend):
    """:class:`VersionedBackend` over a backend a trainer updates: pushes go through the lock."""

    def policy(self) -> TrainablePolicy:
        return self.inner.policy()  # type: ignore[attr-defined]

    def update_weights(self, named_parameters: Iterable[tuple[str, Any]]) -> None:
        named = list(named_parameters)
        with self._lock:  # waits for the generation call in flight; the next waits for this
            started = time.perf_counter()
            self.inner.update_weights(named)  # type: ignore[attr-defined]
            self.push_seconds += time.perf_counter() - started
            self.version = self.updating


def versioned(backend: GenerationBackend) -> VersionedBackend:
    """The backend wrapped for asynchronous training. A backend whose policy shares its module
    with the trainer (updated in place) cannot generate during an update: refused."""
    if isinstance(backend, TrainableBackend):
        if backend.policy().module is not None:
            raise ConfigError(
                f"loop.async_level: backend {type(backend).__name__} generates with the module "
                "the trainer updates in place, so generating during an update would read "
                "half-written weights; select backend vllm-server (or vllm) or set "
                "loop.async_level 0")
        return VersionedTrainableBackend(backend)
    return VersionedBackend(backend)


def stamp_samples(samples: Sequence[TrainingSample], ledger: Mapping[str, tuple[int, Any]],
                  iteration: int, floor: int) -> None:
    """Give each freshly generated sample its id (``meta["sample_id"]``), its policy version
    (``meta["policy_version"]``: the oldest version among its replies; ``floor``, the version at
    the iteration's start, when none is in the ledger), the version of each reply
    (``meta["turn_versions"]``: ``[message index, version]`` pairs) and the log-probabilities the
    backend returned for its replies (``meta["turn_logps"]``: ``[message index, log-probs]``
    pairs, replies it returned none for left out). Designs released from an earlier window keep
    their own record."""
    for k, sample in enumerate(samples):
        if "window_start" in sample.meta:
            continue
        versions, turns = [], []
        for i, message in enumerate(sample.messages):
            if message.get("role") != "assistant":
                continue
            hit = ledger.get(reply_key(sample.messages[:i], str(message.get("content", ""))))
            if hit is None:
                continue
            versions.append([i, int(hit[0])])
            if hit[1] is not None:
                turns.append([i, [float(v) for v in hit[1]]])
        sample.meta["sample_id"] = f"{iteration}:{k}"
        sample.meta["policy_version"] = min((v for _, v in versions), default=floor)
        if versions:
            sample.meta["turn_versions"] = versions
        if turns:
            sample.meta["turn_logps"] = turns


@dataclass
class Generated:
    """One iteration generated and not yet trained: its samples and its metrics row so far."""

    iteration: int
    samples: list[TrainingSample]
    row: dict[str, Any]
    #: ``time.time()`` when its generation started and ended.
    started: float = 0.0
    ended: float = 0.0
    #: Seconds the generator waited for the trainer before starting it.
    waited: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "samples": [asdict(s) for s in self.samples],
                "row": self.row, "started": self.started, "ended": self.ended,
                "waited": self.waited}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Generated":
        return cls(iteration=int(data["iteration"]),
                   samples=[TrainingSample(**s) for s in data["samples"]],
                   row=dict(data["row"]), started=float(data.get("started", 0.0)),
                   ended=float(data.get("ended", 0.0)), waited=float(data.get("waited", 0.0)))


@dataclass
class Trained:
    """One iteration's update: the trainer's metrics and what the pipeline measured."""

    generated: Generated
    metrics: dict[str, Any]
    version: int
    started: float
    ended: float
    staleness: list[int] = field(default_factory=list)
    dropped: int = 0
    push_seconds: float = 0.0


class BackgroundTrainer:
    """Trains iterations one after another on a thread of its own, at most ``level`` updates
    behind the generator. ``version`` counts completed updates (restored from a checkpoint)."""

    def __init__(self, trainer: Trainer, backend: VersionedBackend | None, level: int,
                 version: int = 0) -> None:
        self.trainer, self.backend, self.level = trainer, backend, level
        self.version = version
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spade-train")
        self._queue: list[Future] = []
        # the weights every later sample may be generated with, kept on the training thread
        self._executor.submit(trainer.keep_version, version, level).result()

    def submit(self, generated: Generated) -> None:
        self._queue.append(self._executor.submit(self._train, generated))

    def _train(self, generated: Generated) -> Trained:
        started = time.time()
        kept, staleness, dropped = [], [], 0
        for sample in generated.samples:
            version = sample.meta.get("policy_version")
            if version is None:  # a window's held design: its delay is the schedule's
                kept.append(sample)
                continue
            age = self.version - int(version)  # type: ignore[arg-type]
            if age > self.level:
                dropped += 1
                continue
            staleness.append(age)
            kept.append(sample)
        pushed_before = self.backend.push_seconds if self.backend is not None else 0.0
        if self.backend is not None:
            self.backend.updating = self.version + 1
        metrics = self.trainer.train(kept) or {}
        self.version += 1
        self.trainer.keep_version(self.version, self.level)
        if self.backend is not None:
            self.backend.mark(self.version)
        push = (self.backend.push_seconds - pushed_before) if self.backend is not None else 0.0
        return Trained(generated=generated, metrics=dict(metrics), version=self.version,
                       started=started, ended=time.time(), staleness=staleness,
                       dropped=dropped, push_seconds=push)

    def collect(self, keep: int = 0) -> tuple[list[Trained], float]:
        """Wait until at most ``keep`` submitted iterations are untrained; return those trained
        (oldest first, each once) and the seconds spent waiting."""
        started = time.perf_counter()
        done: list[Trained] = []
        while len(self._queue) > keep or (self._queue and self._queue[0].done()):
            done.append(self._queue.pop(0).result())
        return done, time.perf_counter() - started

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


def pipeline_metrics(trained: Trained, previous_end: float | None, level: int
                     ) -> dict[str, Any]:
    """The ``pipeline`` entry of an asynchronous iteration's ``metrics.jsonl`` row
    (docs/run-files.md): :func:`pipeline_figures` and the update's ``policy_version``."""
    g = trained.generated
    return {**pipeline_figures(g.started, g.ended, g.waited, trained.started, trained.ended,
                               previous_end, level, trained.staleness, trained.dropped,
                               trained.push_seconds),
            "policy_version": trained.version}


def pipeline_figures(generate_start: float, generate_end: float, waited: float,
                     train_start: float, train_end: float, previous_end: float | None,
                     level: int, staleness: list[int] | None = None, dropped: int = 0,
                     push_seconds: float = 0.0) -> dict[str, Any]:
    """The ``pipeline`` entry of an iteration's ``metrics.jsonl`` row from its times: when it
    generated and trained, how long the generator ``waited`` for the trainer, and the previous
    update's end (``None``: the first), with the asynchronous figures (the samples' staleness,
    those dropped as too stale, the weight pushes' seconds) where there are any."""
    staleness = list(staleness or [])
    idle_from = previous_end if previous_end is not None else generate_start
    return {
        "async_level": level,
        "generate_start": generate_start, "generate_end": generate_end,
        "train_start": train_start, "train_end": train_end,
        "generator_busy_seconds": generate_end - generate_start,
        "generator_idle_seconds": waited,
        "trainer_busy_seconds": train_end - train_start,
        "trainer_idle_seconds": max(0.0, train_start - idle_from),
        "staleness": staleness,
        "staleness_max": max(staleness, default=0),
        "samples_dropped_stale": dropped,
        "push_seconds": push_seconds,
    }
