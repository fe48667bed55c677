"""``FaissEnvMemory``: the built-in environment memory (SQLite records, FAISS dedupe index).

The dedupe index holds the embeddings of mastered environments; ``find_duplicate`` refuses a
candidate whose nearest mastered environment is at least ``similarity_threshold`` similar, or whose
canonical code equals a mastered one's. Positive and negative prompt examples come from the record
store ranked by regret and recency.

Checkpoints (``save_checkpoint``/``restore_checkpoint``) are the database itself, copied with
SQLite's online backup, plus the dedupe index files; restoring copies the snapshot back through the
open connection in one transaction, so the memory stays open and keeps its writer lock. With the
option ``readonly`` the memory only reads (no writer lock, no index writes, the embedder and the
index loaded only when a search needs them): what reports and tools use while a run writes.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from functools import cached_property
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from envmemory.embed import Embedder, load_embedder
from envmemory.examples import REFERENCE_TOO_EASY, REFERENCE_TOO_HARD, reference_examples
from envmemory.index import DedupeIndex, IndexConfig, IndexFiles
from envmemory.mastery import MasteryRule, update_stats
from envmemory.options import MemoryOptions
from envmemory.store import DB_NAME, RecordStore, snapshot_meta
from envmemory.representation import env_text, fingerprint
from spade_core.interfaces.memory import EnvMemory
from spade_core.interfaces.prompts import PromptExamples
from spade_core.records import EnvIteration, EnvProgram, EnvRecord, EnvStatus

INDEXED_STATUS = EnvStatus.MASTERED
NEGATIVE_STATUSES = (EnvStatus.MASTERED, EnvStatus.TOO_HARD)
_CACHE_SIZE = 256
#: Threshold for embedders that do not state their own ``default_threshold``.
FALLBACK_THRESHOLD = 0.9


#: Queries scored together in one pass over the stored vectors (bounds the similarity matrix at
#: 256 x 50,000 floats per batch of stored vectors).
_QUERY_CHUNK = 256


class MemoryConfigError(ValueError):
    """The stored memory was built with settings that differ from the options given."""


class MemoryReadOnlyError(RuntimeError):
    """A write was asked of a memory opened with ``readonly``."""


class FaissEnvMemory(EnvMemory):
    """Durable environment memory with embedding dedupe against mastered environments."""

    def __init__(self, folder: Path, options: MemoryOptions | None = None,
                 embedder: Embedder | None = None, success_threshold: float = 1.0) -> None:
        self.options = options or MemoryOptions()
        self.folder = Path(folder)
        self.readonly = self.options.readonly
        self.rule = MasteryRule(
            success_reward=success_threshold,
            mastery_threshold=self.options.mastery_threshold,
            mastery_rollouts=self.options.mastery_rollouts,
            too_hard_threshold=self.options.too_hard_threshold,
            too_hard_rollouts=self.options.too_hard_rollouts)
        self._lock = threading.RLock()
        self._embedder = embedder
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._dedupe_index: DedupeIndex | None = None
        self._unsaved = 0
        #: ``examples: reference``: the played records each prompt draws from, kept until the
        #: next write (every prompt of an iteration reads the same ones).
        self._example_cache: tuple[Any, list[EnvRecord], list[EnvRecord]] | None = None
        self.load_report = "not loaded yet"
        if self.readonly:
            # Settings come from the store, not the options: reading needs no agreement, and the
            # embedding model is not loaded unless a text or program query needs it.
            self.store = RecordStore(self.folder, readonly=True)
            self.files = IndexFiles(self.folder, self.embedder_name)
            return
        self.store = RecordStore(self.folder, synchronous=self.options.synchronous.upper())
        try:
            self._check_settings()
            if self.options.structural_match:
                self.store.fill_fingerprints(fingerprint)
            self.files = IndexFiles(self.folder, self.embedder.name)
            self._load_index(self.files)
        except BaseException:
            self.store.close()
            raise

    # -- setup ----------------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder: built from the options, or (read-only) from the spec the memory
        stored when it was created, so queries are embedded like the stored vectors."""
        if self._embedder is None:
            name, options = self.options.embedder, self.options.embedder_options
            if self.readonly:
                spec = json.loads(self.store.meta("embedder_spec") or "null") or {}
                name, options = spec.get("name", name), spec.get("options", options)
            self._embedder = load_embedder(name, options)
        return self._embedder

    @cached_property
    def embedder_name(self) -> str:
        """Name of the embedder the stored vectors come from (no model is loaded for it when
        the memory already says). The stored settings never change while the memory is open
        (a writer checked them against its options; a restore refuses other settings), so they
        are read once, not on every embedding."""
        stored = self.store.meta("embedder")
        return stored if stored is not None else self.embedder.name

    @cached_property
    def dim(self) -> int:
        """Dimension of the stored vectors."""
        stored = self.store.meta("dim")
        return int(stored) if stored is not None else int(self.embedder.dim)

    @cached_property
    def representation(self) -> str:
        """The text representation the stored vectors embed (``docs/memory.md``)."""
        return self.store.meta("representation") or self.options.representation

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

    def _writable(self, action: str) -> None:
        if self.readonly:
            raise MemoryReadOnlyError(f"the memory at {self.folder} is open read-only (option "
                                      f"readonly); cannot {action}")

    def _index_config(self) -> IndexConfig:
        return IndexConfig(dim=self.dim, switch_size=self.options.switch_size,
                           nprobe=self.options.nprobe)

    def _load_index(self, files: IndexFiles) -> None:
        """Load the dedupe index saved in ``files`` (verified against the store and caught up with
        it, or rebuilt from the stored embeddings)."""
        dedupe, self.load_report = files.load(self._index_config(), self.store.index_size,
                                            lambda w: self.store.index_rows(after=w))
        self._dedupe_index = dedupe
        if not self.readonly:
            self._unsaved = 0 if self.load_report == "loaded" else max(1, dedupe.ntotal)

    @property
    def dedupe_index(self) -> DedupeIndex:
        """The FAISS index over mastered environments (read-only: loaded on first use)."""
        with self._lock:
            if self._dedupe_index is None:
                self._load_index(self.files)
            assert self._dedupe_index is not None
            return self._dedupe_index

    @property
    def threshold(self) -> float:
        """The similarity at or above which a candidate is a duplicate."""
        if self.options.similarity_threshold is not None:
            return self.options.similarity_threshold
        return float(getattr(self.embedder, "default_threshold", FALLBACK_THRESHOLD))

    # -- embedding ------------------------------------------------------------------------------

    def text_of(self, source: str, description: str = "") -> str:
        """The text this memory embeds for an environment."""
        return env_text(source, description, self.representation)

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

    # -- the EnvMemory interface: required ------------------------------------------------------

    def find_duplicate(self, program: EnvProgram) -> tuple[EnvRecord, float] | None:
        """The mastered environment ``program`` duplicates, with its similarity, or ``None``."""
        with self._lock:
            if self.store.status_of(program.id) == INDEXED_STATUS:
                record = self.store.get(program.id)
                return (record, 1.0) if record else None
            if self.options.structural_match:
                match = self.store.by_fingerprint(fingerprint(program.source), (INDEXED_STATUS,))
                if match is not None:
                    return match, 1.0
            vector = self._vector(program.id, program.source, program.description)
            hits = self.nearest_mastered(vector, k=1)
            if hits and hits[0][1] >= self.threshold:
                return hits[0]
            return None

    def add(self, record: EnvRecord) -> None:
        """Store a new record as given, history included (embedding it if it has no
        embedding); a known id only counts one more proposal."""
        self._writable("add records")
        with self._lock:
            if record.embedding is not None:
                vector = np.asarray(record.embedding, dtype=np.float32)
            else:
                vector = self._vector(record.id, record.source, record.description)
            now = time.time()
            record.created_at = record.created_at or now
            record.updated_at = record.updated_at or now
            indexed = record.status == INDEXED_STATUS
            # The fingerprint only serves structural matching: not computed without it (a
            # memory opened later with it fills the missing ones in: store.fill_fingerprints).
            structure = fingerprint(record.source) if self.options.structural_match else None
            inserted = self.store.insert(record, vector, structure, indexed)
            if inserted and indexed:
                self._add_to_index(record.id, vector)

    def update_stats(self, env_id: str, iteration: int, hinted: Sequence[float],
                     unhinted: Sequence[float], figures: dict[str, float],
                     designer_reward: float) -> EnvRecord:
        """Record one iteration's play and apply the status rules; returns the updated record."""
        self._writable("record statistics")
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
            index_id = self.store.record_iteration(env_id, entry, stats, status,
                                                  enter_index=status == INDEXED_STATUS)
            if index_id is not None and record.embedding is not None:
                self._index_add(index_id, np.asarray(record.embedding, dtype=np.float32))
            updated = self.store.get(env_id)
            assert updated is not None
            return updated

    def get(self, env_id: str) -> EnvRecord | None:
        """The stored record (history included), or ``None``."""
        return self.store.get(env_id)

    def frontier_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        """Positive examples: frontier environments with a win rate inside the configured band,
        highest regret first."""
        o = self.options
        return self.store.ranked((EnvStatus.FRONTIER,), k, family,
                                 "regret DESC, designer_reward DESC, updated_at DESC",
                                 win_range=(o.frontier_win_low, o.frontier_win_high))

    def negative_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        """Negative examples: the most recently mastered or too-hard environments."""
        return self.store.ranked(NEGATIVE_STATUSES, k, family, "updated_at DESC")

    def prompt_examples(self, positive: int, negative: int, family: str | None = None,
                        skill: str | None = None, seed: int = 0) -> PromptExamples:
        """``examples: top-regret``: the base class's (frontier and negative examples of the
        family). ``examples: reference``: :func:`reference_examples` over the played records of
        the family and skill."""
        if self.options.examples != "reference":
            return super().prompt_examples(positive, negative, family, skill, seed)
        band, outside = self._example_candidates(family, skill, positive)
        drawn = reference_examples(band, outside, positive, negative, seed)
        return replace(drawn, positive=[replace(r) for r in drawn.positive],
                       negative=[replace(r) for r in drawn.negative])

    def _example_candidates(self, family: str | None, skill: str | None, positive: int
                      ) -> tuple[list[EnvRecord], list[EnvRecord]]:
        """The played records in the win band (the top ``max(3 * positive, 10)``) and outside
        it, read once per ``family``, ``skill`` and ``positive`` between two writes of a
        writable memory (a read-only one may have another writer)."""
        key = (family, skill, positive, self.store.writes)
        if not self.readonly and self._example_cache is not None \
                and self._example_cache[0] == key:
            return self._example_cache[1], self._example_cache[2]
        o = self.options
        band = self.store.played(family, skill, "win_rate BETWEEN ? AND ?",
                                 (o.frontier_win_low, o.frontier_win_high),
                                 "regret IS NULL, regret DESC, seq ASC",
                                 limit=max(3 * positive, 10))
        outside = self.store.played(family, skill, "win_rate > ? OR win_rate < ?",
                                    (REFERENCE_TOO_EASY, REFERENCE_TOO_HARD), "seq ASC")
        self._example_cache = (key, band, outside)
        return band, outside

    def records(self) -> Iterator[EnvRecord]:
        """Every record with its history, in insertion order, read in pages (a large memory is
        streamed, not loaded at once)."""
        return self.store.records()

    def search(self, query: str | EnvProgram | EnvRecord, k: int = 10, *,
               statuses: Sequence[str] | None = None, family: str | None = None,
               ) -> list[tuple[EnvRecord, float]]:
        """Exact nearest records to ``query`` among every embedded record (filtered by status
        and family) by cosine similarity, scanning the stored vectors with NumPy: see
        :meth:`EnvMemory.search` for the query kinds. A stored record's own vector needs no
        embedding model."""
        return self.search_many([query], k, statuses=statuses, family=family)[0]

    def set_status(self, env_id: str, status: str) -> EnvRecord:
        """Move one record to ``status``. Entering the dedupe index happens only through
        :meth:`update_stats` (a mastered environment), so ``mastered`` is refused here."""
        self._writable("change a status")
        if status == INDEXED_STATUS:
            raise ValueError("an environment becomes mastered through update_stats(), which also "
                             "adds it to the dedupe index")
        with self._lock:
            if not self.store.set_status(env_id, status):
                raise KeyError(f"environment {env_id!r} is not in the memory at {self.folder}")
            updated = self.store.get(env_id)
            assert updated is not None
            return updated

    def add_figures(self, env_id: str, iteration: int, figures: dict[str, float]) -> bool:
        """Merge ``figures`` into one history entry (a design's delayed reward); returns whether
        the entry exists."""
        self._writable("record figures")
        with self._lock:
            return self.store.add_figures(env_id, iteration,
                                          {k: float(v) for k, v in figures.items()})

    def by_status(self, statuses: Sequence[str], family: str | None = None
                  ) -> Iterator[EnvRecord]:
        """Records with a status in ``statuses`` straight from SQL (oldest first), each with its
        history: no scan of the whole memory."""
        for record in self.store.ranked(tuple(statuses), 2 ** 62, family, "created_at, id"):
            record.history = self.store.history(record.id)
            yield record

    def clear(self) -> None:
        """Delete every record and empty the dedupe index (the settings stay)."""
        self._writable("clear")
        with self._lock:
            self.store.clear()
            self._vectors.clear()
            self._dedupe_index = DedupeIndex(self._index_config())
            self._unsaved = 1
            self.save_index()

    # -- the EnvMemory interface: optional, overridden ------------------------------------------

    def find_duplicates(self, programs: Sequence[EnvProgram]
                        ) -> list[tuple[EnvRecord, float] | None]:
        """``find_duplicate`` for many programs, embedding them in one batch (the loop's dedupe)."""
        with self._lock:
            self._warm(programs)
            return [self.find_duplicate(program) for program in programs]

    def search_many(self, queries: Sequence[str | EnvProgram | EnvRecord], k: int = 10, *,
                    statuses: Sequence[str] | None = None, family: str | None = None,
                    ) -> list[list[tuple[EnvRecord, float]]]:
        """:meth:`search` for many queries with one scan of the stored vectors per
        ``_QUERY_CHUNK`` queries; texts and programs are embedded in one batch."""
        if k <= 0 or not queries:
            return [[] for _ in queries]
        vectors, exclude = self._query_vectors(queries)
        found = scan_nearest(self.store, vectors, k, statuses, family, exclude)
        records: dict[str, EnvRecord | None] = {}
        results = []
        for pairs in found:
            hits = []
            for sim, env_id in pairs:
                if env_id not in records:
                    records[env_id] = self.store.get(env_id)
                record = records[env_id]
                if record is not None:
                    hits.append((record, sim))
            results.append(hits)
        return results

    def _query_vectors(self, queries: Sequence[str | EnvProgram | EnvRecord]
                       ) -> tuple[np.ndarray, list[str | None]]:
        """One unit vector per query, and the id each query's results must leave out."""
        dim = self.dim
        rows: list[np.ndarray | None] = [None] * len(queries)
        exclude: list[str | None] = [None] * len(queries)
        texts: dict[int, str] = {}
        for i, query in enumerate(queries):
            if isinstance(query, EnvRecord):
                exclude[i] = query.id
                if query.embedding is not None and len(query.embedding) == dim:
                    rows[i] = np.asarray(query.embedding, dtype=np.float32)
                else:
                    texts[i] = self.text_of(query.source, query.description)
            elif isinstance(query, EnvProgram):
                texts[i] = self.text_of(query.source, query.description)
            elif isinstance(query, str):
                texts[i] = query
            else:
                raise TypeError(f"search query must be text, an EnvProgram or an EnvRecord, "
                                f"not {type(query).__name__}")
        if texts:
            with self._lock:
                embedded = self.embedder.embed(list(texts.values()))
            for i, vector in zip(texts, embedded, strict=True):
                rows[i] = vector
        return np.stack([r for r in rows if r is not None]).astype(np.float32), exclude

    def stats(self) -> dict[str, Any]:
        """Record counts, the dedupe index and the settings, for reports (no embedding model is
        loaded for it)."""
        threshold = (self.threshold if self._embedder is not None
                     else self.options.similarity_threshold)
        loaded = self._dedupe_index
        index = loaded.describe() if loaded is not None else self.files.manifest()
        return {**self.store.counts(), "folder": str(self.folder), "index": index,
                "index_load": self.load_report, "embedder": self.embedder_name,
                "representation": self.representation, "similarity_threshold": threshold,
                "readonly": self.readonly}

    def save_checkpoint(self, folder: Path) -> None:
        """Snapshot into ``folder``: ``memory.sqlite`` (SQLite online backup, consistent while
        the memory stays open) and the dedupe index as ``dedupe_index.json`` +
        ``dedupe_index-1.faiss`` (so a resume need not rebuild it; a read-only memory leaves the
        index out: restore rebuilds it from the stored embeddings)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self.store.backup_to(folder / DB_NAME)
            if not self.readonly:
                IndexFiles(folder, self.embedder_name).save(self.dedupe_index)

    def restore_checkpoint(self, folder: Path) -> None:
        """Make this open memory hold exactly the snapshot in ``folder`` (written by
        :meth:`save_checkpoint`, or a copied memory folder from an older checkpoint).

        The snapshot is checked first (integrity, embedder, dimension, representation): a bad
        one raises and changes nothing. The database is then replaced through the open
        connection in one transaction (the writer lock is kept throughout), and the dedupe index
        is loaded from the snapshot's files, verified against the restored records (else
        rebuilt from them) and saved into the memory folder."""
        self._writable("restore a checkpoint")
        folder = Path(folder)
        snapshot = folder / DB_NAME
        meta = snapshot_meta(snapshot)
        for key in ("embedder", "dim", "representation"):
            stored, current = meta.get(key), self.store.meta(key)
            if stored is not None and current is not None and stored != current:
                raise MemoryConfigError(
                    f"checkpoint memory at {folder} was built with {key} {stored!r}, this "
                    f"memory with {current!r}; resume with the run's own memory options")
        with self._lock:
            self.store.restore_from(snapshot)
            self._vectors.clear()
            self._dedupe_index = None
            try:
                self._check_settings()  # an older snapshot may lack some settings rows
                self._load_index(IndexFiles(folder, self.embedder_name))
            except BaseException:
                # Reloaded from the memory folder, verified, on next use.
                self._dedupe_index = None
                raise
            self._unsaved = max(1, self.dedupe_index.ntotal)
            self.save_index()

    def close(self) -> None:
        """Save the dedupe index when it changed, then close the database (releasing the lock)."""
        with self._lock:
            try:
                if self._unsaved and self._dedupe_index is not None and not self.readonly:
                    self.save_index()
            finally:
                self.store.close()

    # -- search and upkeep ----------------------------------------------------------------------

    def _add_to_index(self, env_id: str, vector: np.ndarray) -> None:
        index_id = self.store.index_id_of(env_id)
        if index_id is not None:
            self._index_add(index_id, vector)

    def _index_add(self, index_id: int, vector: np.ndarray) -> None:
        self.dedupe_index.add(np.array([index_id], dtype=np.int64), vector.reshape(1, -1))
        self._unsaved += 1
        if self._unsaved >= max(self.options.save_every, self.dedupe_index.ntotal // 10):
            self.save_index()

    def save_index(self) -> None:
        """Write the dedupe index atomically into the memory folder (done every ``save_every``
        additions, on close and by checkpoints; an internal detail, not part of the
        interface)."""
        self._writable("save the index")
        with self._lock:
            self.files.save(self.dedupe_index)
            self._unsaved = 0

    def nearest_mastered(self, vector: np.ndarray, k: int = 5, family: str | None = None
                         ) -> list[tuple[EnvRecord, float]]:
        """The ``k`` mastered environments most similar to ``vector`` (optionally one family)."""
        dedupe = self.dedupe_index
        fetch = k if family is None else k * 8
        while True:
            k_fetch = min(fetch, max(1, dedupe.ntotal))
            sims, ids = dedupe.search(vector.reshape(1, -1), k_fetch)
            found = [(int(i), float(s)) for i, s in zip(ids[0], sims[0]) if i >= 0]
            records = self.store.by_index_ids([i for i, _ in found])
            hits = [(records[i], s) for i, s in found if i in records
                    and (family is None or records[i].family == family)]
            if len(hits) >= k or fetch >= dedupe.ntotal:
                return hits[:k]
            fetch *= 4


def scan_nearest(store: RecordStore, queries: np.ndarray, k: int,
                 statuses: Sequence[str] | None = None, family: str | None = None,
                 exclude: Sequence[str | None] | None = None) -> list[list[tuple[float, str]]]:
    """Best ``k`` ``(similarity, id)`` per query row (closest first, ties by id) over every
    stored vector matching the filters, leaving out ``exclude[i]`` for query ``i``. One pass over
    the stored vectors serves up to ``_QUERY_CHUNK`` queries."""
    queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
    exclude = list(exclude) if exclude is not None else [None] * len(queries)
    results: list[list[tuple[float, str]]] = []
    for start in range(0, len(queries), _QUERY_CHUNK):
        chunk = queries[start:start + _QUERY_CHUNK]
        skip = exclude[start:start + _QUERY_CHUNK]
        best: list[list[tuple[float, str]]] = [[] for _ in range(len(chunk))]
        for ids, vectors in store.embeddings(statuses, family):
            if vectors.shape[1] != chunk.shape[1]:
                continue  # vectors of another dimension are not comparable
            sims = chunk @ vectors.T
            take = min(k + 1, len(ids))
            top = np.argpartition(-sims, take - 1, axis=1)[:, :take]
            for row, found in enumerate(best):
                found.extend((float(sims[row, j]), ids[j]) for j in top[row]
                             if ids[j] != skip[row])
                found.sort(key=lambda pair: (-pair[0], pair[1]))
                del found[k:]
        results.extend(best)
    return results


def exact_search(store: RecordStore, query: np.ndarray, k: int,
                 statuses: Sequence[str] | None = None, family: str | None = None
                 ) -> list[tuple[EnvRecord, float]]:
    """Top ``k`` stored records by cosine similarity to ``query``, scanning every vector."""
    results = []
    for sim, env_id in scan_nearest(store, query, k, statuses, family)[0]:
        record = store.get(env_id)
        if record is not None:
            results.append((record, sim))
    return results
