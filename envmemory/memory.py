"""``FaissEnvMemory``: the built-in environment memory (SQLite records, FAISS dedupe pool).

The dedupe pool holds the embeddings of mastered environments; ``find_duplicate`` refuses a
candidate whose nearest mastered environment is at least ``similarity_threshold`` similar, or whose
canonical code equals a mastered one's. Positive and negative prompt examples come from the record
store ranked by regret and recency.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from envmemory.embed import Embedder, load_embedder
from envmemory.index import IndexConfig, IndexFiles
from envmemory.mastery import MasteryRule, update_stats
from envmemory.options import MemoryOptions
from envmemory.store import RecordStore
from envmemory.text import env_text, fingerprint
from spade_core.interfaces.memory import EnvIteration, EnvRecord
from spade_core.records import EnvProgram

POOL_STATUS = "mastered"
NEGATIVE_STATUSES = ("mastered", "too_hard")
_CACHE_SIZE = 256
#: Threshold for embedders that do not state their own ``default_threshold``.
FALLBACK_THRESHOLD = 0.9


class MemoryConfigError(ValueError):
    """The stored memory was built with settings that differ from the options given."""


class FaissEnvMemory:
    """Durable environment memory with embedding dedupe against mastered environments."""

    def __init__(self, folder: Path, options: MemoryOptions | None = None,
                 embedder: Embedder | None = None) -> None:
        self.options = options or MemoryOptions()
        self.folder = Path(folder)
        self.rule = MasteryRule(
            success_reward=self.options.success_reward,
            mastery_threshold=self.options.mastery_threshold,
            mastery_rollouts=self.options.mastery_rollouts,
            too_hard_threshold=self.options.too_hard_threshold,
            too_hard_rollouts=self.options.too_hard_rollouts)
        self._lock = threading.RLock()
        self._embedder = embedder
        self.store = RecordStore(self.folder, synchronous=self.options.synchronous.upper())
        try:
            self._check_settings()
            config = IndexConfig(dim=self.embedder.dim, switch_size=self.options.switch_size,
                                 nprobe=self.options.nprobe)
            self.files = IndexFiles(self.folder, self.embedder.name)
            self.pool, self.load_report = self.files.load(
                config, self.store.pool_size, lambda w: self.store.pool_rows(after=w))
        except BaseException:
            self.store.close()
            raise
        self._unsaved = 0 if self.load_report == "loaded" else max(1, self.pool.ntotal)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    # -- setup ----------------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.options.embedder, self.options.embedder_options)
        return self._embedder

    def _check_settings(self) -> None:
        wanted = {"embedder": self.embedder.name, "dim": str(self.embedder.dim),
                  "representation": self.options.representation}
        for key, value in wanted.items():
            stored = self.store.meta(key)
            if stored is None:
                self.store.set_meta(key, value)
            elif stored != value:
                raise MemoryConfigError(
                    f"memory at {self.folder} was built with {key} {stored!r}, but the options "
                    f"ask for {value!r}; use the same {key} or a new memory path")
        if self.store.meta("embedder_spec") is None:
            self.store.set_meta("embedder_spec", json.dumps(
                {"name": self.options.embedder, "options": self.options.embedder_options}))

    @property
    def threshold(self) -> float:
        """The similarity at or above which a candidate is a duplicate."""
        if self.options.similarity_threshold is not None:
            return self.options.similarity_threshold
        return float(getattr(self.embedder, "default_threshold", FALLBACK_THRESHOLD))

    # -- embedding ------------------------------------------------------------------------------

    def text_of(self, source: str, description: str = "") -> str:
        """The text this memory embeds for an environment."""
        return env_text(source, description, self.options.representation)

    def _vector(self, env_id: str, source: str, description: str) -> np.ndarray:
        cached = self._vectors.get(env_id)
        if cached is not None:
            self._vectors.move_to_end(env_id)
            return cached
        vector = self.embedder.embed([self.text_of(source, description)])[0]
        self._vectors[env_id] = vector
        if len(self._vectors) > _CACHE_SIZE:
            self._vectors.popitem(last=False)
        return vector

    def _warm(self, programs: Sequence[EnvProgram]) -> None:
        """Embed every program not cached yet in one batched call (much cheaper than one by one)."""
        todo: dict[str, EnvProgram] = {}
        for program in programs:
            if program.id not in self._vectors and program.id not in todo:
                todo[program.id] = program
        if not todo:
            return
        texts = [self.text_of(p.source, p.description) for p in todo.values()]
        for env_id, vector in zip(todo, self.embedder.embed(texts), strict=True):
            self._vectors[env_id] = vector
        while len(self._vectors) > max(_CACHE_SIZE, len(todo)):
            self._vectors.popitem(last=False)

    def embed_query(self, text: str) -> np.ndarray:
        """Embedding of free text (a search query), not of an environment program."""
        return self.embedder.embed([text])[0]

    # -- the EnvMemory protocol -----------------------------------------------------------------

    def find_duplicate(self, program: EnvProgram) -> tuple[EnvRecord, float] | None:
        """The mastered environment ``program`` duplicates, with its similarity, or ``None``."""
        with self._lock:
            if self.store.status_of(program.id) == POOL_STATUS:
                record = self.store.get(program.id)
                return (record, 1.0) if record else None
            if self.options.structural_match:
                match = self.store.by_fingerprint(fingerprint(program.source), (POOL_STATUS,))
                if match is not None:
                    return match, 1.0
            vector = self._vector(program.id, program.source, program.description)
            hits = self.nearest_mastered(vector, k=1)
            if hits and hits[0][1] >= self.threshold:
                return hits[0]
            return None

    def find_duplicates(self, programs: Sequence[EnvProgram]
                        ) -> list[tuple[EnvRecord, float] | None]:
        """``find_duplicate`` for many programs, embedding them in one batch (the loop's dedupe)."""
        with self._lock:
            self._warm(programs)
            return [self.find_duplicate(program) for program in programs]

    def records(self) -> Iterator[EnvRecord]:
        """Every record, in insertion order (a fixed pool reads a run's memory this way)."""
        return self.store.records()

    def add(self, record: EnvRecord) -> None:
        """Store a new record (embedding it if needed); a known id only counts one more proposal."""
        with self._lock:
            if record.embedding is not None:
                vector = np.asarray(record.embedding, dtype=np.float32)
            else:
                vector = self._vector(record.id, record.source, record.description)
            now = time.time()
            record.created_at = record.created_at or now
            record.updated_at = record.updated_at or now
            in_pool = record.status == POOL_STATUS
            inserted = self.store.insert(record, vector, fingerprint(record.source), in_pool)
            if inserted and in_pool:
                self._add_to_pool(record.id, vector)

    def update_stats(self, env_id: str, iteration: int, hinted: Sequence[float],
                     unhinted: Sequence[float], figures: dict[str, float],
                     designer_reward: float) -> EnvRecord:
        """Record one iteration's play and apply the status rules; returns the updated record."""
        with self._lock:
            record = self.store.get(env_id)
            if record is None:
                raise KeyError(f"environment {env_id!r} is not in the memory at {self.folder}; "
                               "add() it before recording statistics")
            stats, status = update_stats(record.stats, record.status, hinted, unhinted, figures,
                                         designer_reward, self.rule)
            entry = EnvIteration(iteration=iteration, hinted=[float(x) for x in hinted],
                                 unhinted=[float(x) for x in unhinted],
                                 figures={k: float(v) for k, v in figures.items()},
                                 designer_reward=float(designer_reward), at=time.time())
            pool_id = self.store.record_iteration(env_id, entry, stats, status,
                                                  enter_pool=status == POOL_STATUS)
            if pool_id is not None and record.embedding is not None:
                self._index_add(pool_id, np.asarray(record.embedding, dtype=np.float32))
            updated = self.store.get(env_id)
            assert updated is not None
            return updated

    def get(self, env_id: str) -> EnvRecord | None:
        return self.store.get(env_id)

    def frontier_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        """Positive examples: frontier environments with a win rate inside the configured band,
        highest regret first."""
        o = self.options
        return self.store.ranked(("frontier",), k, family,
                                 "regret DESC, designer_reward DESC, updated_at DESC",
                                 win_range=(o.frontier_win_low, o.frontier_win_high))

    def negative_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        """Negative examples: the most recently mastered or too-hard environments."""
        return self.store.ranked(NEGATIVE_STATUSES, k, family, "updated_at DESC")

    def close(self) -> None:
        with self._lock:
            try:
                if self._unsaved:
                    self.save_index()
            finally:
                self.store.close()

    # -- search and upkeep ----------------------------------------------------------------------

    def _add_to_pool(self, env_id: str, vector: np.ndarray) -> None:
        pool_id = self.store.pool_id_of(env_id)
        if pool_id is not None:
            self._index_add(pool_id, vector)

    def _index_add(self, pool_id: int, vector: np.ndarray) -> None:
        self.pool.add(np.array([pool_id], dtype=np.int64), vector.reshape(1, -1))
        self._unsaved += 1
        if self._unsaved >= max(self.options.save_every, self.pool.ntotal // 10):
            self.save_index()

    def save_index(self) -> None:
        """Write the pool index atomically (done automatically every ``save_every`` additions)."""
        with self._lock:
            self.files.save(self.pool)
            self._unsaved = 0

    def nearest_mastered(self, vector: np.ndarray, k: int = 5, family: str | None = None
                         ) -> list[tuple[EnvRecord, float]]:
        """The ``k`` mastered environments most similar to ``vector`` (optionally one family)."""
        fetch = k if family is None else k * 8
        while True:
            k_fetch = min(fetch, max(1, self.pool.ntotal))
            sims, ids = self.pool.search(vector.reshape(1, -1), k_fetch)
            found = [(int(i), float(s)) for i, s in zip(ids[0], sims[0]) if i >= 0]
            records = self.store.by_pool_ids([i for i, _ in found])
            hits = [(records[i], s) for i, s in found if i in records
                    and (family is None or records[i].family == family)]
            if len(hits) >= k or fetch >= self.pool.ntotal:
                return hits[:k]
            fetch *= 4

    def search(self, text: str, k: int = 10, statuses: Sequence[str] | None = None,
               family: str | None = None, as_program: bool = False
               ) -> list[tuple[EnvRecord, float]]:
        """Exact nearest records to ``text`` among every embedded record (filtered by status and
        family), by a NumPy scan of the stored vectors. ``as_program`` embeds ``text`` as an
        environment program (its representation) rather than as a free-text query."""
        query = (self.embedder.embed([self.text_of(text)])[0] if as_program
                 else self.embed_query(text))
        return exact_search(self.store, query, k, statuses, family)

    def stats(self) -> dict[str, Any]:
        """Record counts, the pool index and the settings, for reports."""
        return {**self.store.counts(), "index": self.pool.describe(),
                "index_load": self.load_report, "embedder": self.embedder.name,
                "representation": self.options.representation,
                "similarity_threshold": self.threshold}


def exact_search(store: RecordStore, query: np.ndarray, k: int,
                 statuses: Sequence[str] | None = None, family: str | None = None
                 ) -> list[tuple[EnvRecord, float]]:
    """Top ``k`` stored records by cosine similarity to ``query``, scanning every vector."""
    best: list[tuple[float, str]] = []
    for ids, vectors in store.embeddings(statuses, family):
        sims = vectors @ query.astype(np.float32)
        top = np.argsort(-sims)[:k]
        best.extend((float(sims[i]), ids[i]) for i in top)
        best = sorted(best, reverse=True)[:k]
    results = []
    for sim, env_id in best:
        record = store.get(env_id)
        if record is not None:
            results.append((record, sim))
    return results

