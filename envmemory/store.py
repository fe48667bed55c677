"""The durable record store: one SQLite database in WAL mode.

Every record (source, status, statistics, embedding) is written in its own transaction, so a
``kill -9`` loses at most the record being written and readers (``spade memory stats``) see a
consistent snapshot while a run writes. Records that enter the dedupe index (mastered environments)
get an ``index_id`` (a column of that name), the id their vector has in the FAISS
index; the index is only a cache of
``(index_id, embedding)`` rows and can always be rebuilt from here. A write that finds the disk
full is rolled back and raises :class:`~spade_core.disk_space.DiskFullError` naming the database.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from spade_core.disk_space import writing
from spade_core.interfaces.memory import ENV_STATUSES
from spade_core.records import EnvIteration, EnvRecord

DB_NAME = "memory.sqlite"
LOCK_NAME = "writer.lock"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS envs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    family TEXT NOT NULL,
    status TEXT NOT NULL,
    doc_id TEXT,
    description TEXT NOT NULL DEFAULT '',
    verdict_category TEXT NOT NULL DEFAULT '',
    verdict_message TEXT NOT NULL DEFAULT '',
    hint TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL,
    fingerprint TEXT,
    duplicate_of TEXT,
    duplicate_similarity REAL,
    stats TEXT NOT NULL DEFAULT '{}',
    times_proposed INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    regret REAL,
    win_rate REAL,
    designer_reward REAL,
    index_id INTEGER UNIQUE,
    embedding BLOB,
    skill TEXT NOT NULL DEFAULT '',
    level INTEGER NOT NULL DEFAULT 0,
    repairs INTEGER NOT NULL DEFAULT 0
);
-- prompt examples: frontier by regret, negatives by recency, optionally one family
CREATE INDEX IF NOT EXISTS envs_status_family_regret ON envs (status, family, regret);
CREATE INDEX IF NOT EXISTS envs_status_regret ON envs (status, regret);
CREATE INDEX IF NOT EXISTS envs_status_updated ON envs (status, updated_at);
CREATE INDEX IF NOT EXISTS envs_fingerprint ON envs (fingerprint);
CREATE TABLE IF NOT EXISTS iterations (
    env_id TEXT NOT NULL,
    iteration INTEGER NOT NULL,
    hinted TEXT NOT NULL,
    unhinted TEXT NOT NULL,
    figures TEXT NOT NULL,
    designer_reward REAL NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (env_id, iteration)
);
"""

_COLUMNS = ("id, family, status, doc_id, description, verdict_category, verdict_message, hint, "
            "source, duplicate_of, duplicate_similarity, stats, times_proposed, created_at, "
            "updated_at, embedding, skill, level, repairs")

#: Columns added after schema version 1 first shipped, with their defaults: a memory written
#: before them gains them when opened for writing and reads them as the defaults when read-only.
_ADDED_COLUMNS = {"skill": ("TEXT NOT NULL DEFAULT ''", "''"),
                  "level": ("INTEGER NOT NULL DEFAULT 0", "0"),
                  "repairs": ("INTEGER NOT NULL DEFAULT 0", "0")}


def _envs_columns(conn: sqlite3.Connection) -> set[str]:
    return {row[1] for row in conn.execute("PRAGMA table_info(envs)")}


def _select_columns(conn: sqlite3.Connection) -> str:
    """``_COLUMNS`` for this database: added columns an older database lacks read as defaults."""
    have = _envs_columns(conn)
    return ", ".join(name if name in have or name not in _ADDED_COLUMNS
                     else f"{_ADDED_COLUMNS[name][1]} AS {name}"
                     for name in (c.strip() for c in _COLUMNS.split(",")))


class StoreLockedError(RuntimeError):
    """Another process already writes this memory."""


def _holder(text: str) -> str:
    """`` (pid N on HOST since TIME)`` from what the writer wrote into ``writer.lock``, or ``""``
    when it wrote nothing readable (a memory written before the lock named its holder)."""
    try:
        info = json.loads(text.splitlines()[0])
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["since"])))
        return f" (pid {int(info['pid'])} on {info['host']} since {since})"
    except (IndexError, KeyError, TypeError, ValueError):
        return ""


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def _vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


def open_snapshot(path: Path) -> sqlite3.Connection:
    """A read-only connection to a database snapshot that nothing writes (``immutable``: no
    locks, no ``-wal``/``-shm`` files created beside it)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no memory snapshot at {path}")
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True,
                           check_same_thread=False)


def _readonly_uri(path: Path) -> str:
    """How a read-only store opens ``path`` without leaving files behind. A WAL database opened
    with plain ``mode=ro`` creates ``-wal`` and ``-shm`` beside it; when they are absent (no
    writer has it open), ``immutable=1`` reads the file alone. When they exist (a run is writing
    it), ``mode=ro`` reads through them so the newest commits are seen, and creates nothing."""
    wal = path.with_name(path.name + "-wal")
    shm = path.with_name(path.name + "-shm")
    if wal.exists() or shm.exists():
        return f"file:{path}?mode=ro"
    return f"file:{path}?mode=ro&immutable=1"


def snapshot_meta(path: Path) -> dict[str, str]:
    """The ``meta`` table of a database snapshot, after SQLite's quick integrity check; a damaged
    or foreign file raises ``ValueError``."""
    try:
        connection = open_snapshot(path)
    except FileNotFoundError as exc:
        raise ValueError(str(exc)) from None
    try:
        check = connection.execute("PRAGMA quick_check").fetchone()
        if not check or check[0] != "ok":
            raise ValueError(f"memory snapshot {path} is damaged: {check}")
        return dict(connection.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"memory snapshot {path} is not a readable memory database: "
                         f"{exc}") from None
    finally:
        connection.close()


class RecordStore:
    """SQLite record store of one memory folder; one writer at a time, any number of readers."""

    def __init__(self, folder: Path, readonly: bool = False, synchronous: str = "NORMAL") -> None:
        self.folder = Path(folder)
        self.path = self.folder / DB_NAME
        self.readonly = readonly
        #: Writes begun through this store: what a reader caches is current while it holds
        #: (a writable store is the memory's one writer).
        self.writes = 0
        self._lock = threading.RLock()
        self._lock_file = None
        if readonly:
            if not self.path.exists():
                raise FileNotFoundError(f"no environment memory at {self.path}")
            self.conn = sqlite3.connect(_readonly_uri(self.path), uri=True,
                                        isolation_level=None, check_same_thread=False)
            self.conn.execute("PRAGMA query_only=ON")
            self._columns = _select_columns(self.conn)
            return
        with self._writing("folder"):
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock_file = open(self.folder / LOCK_NAME, "a+")  # noqa: SIM115 - held open
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.seek(0)
            holder = _holder(self._lock_file.read())
            self._lock_file.close()
            raise StoreLockedError(
                f"{self.folder} is already open for writing by another process{holder}; one "
                "memory has one writer: give this run a memory of its own (memory.options.path), "
                "read it with `spade memory stats` or wait for the other run to end") from None
        with self._writing("schema"):
            self._lock_file.seek(0)
            self._lock_file.truncate()
            self._lock_file.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                              "since": time.time()}) + "\n")
            self._lock_file.flush()
            self.conn = sqlite3.connect(self.path, isolation_level=None,
                                        check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute(f"PRAGMA synchronous={synchronous}")
            self.conn.executescript(_SCHEMA)
            have = _envs_columns(self.conn)
            for name, (declaration, _) in _ADDED_COLUMNS.items():
                if name not in have:
                    self.conn.execute(f"ALTER TABLE envs ADD COLUMN {name} {declaration}")
            self._columns = _select_columns(self.conn)
            self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                              (SCHEMA_VERSION,))

    def _writing(self, what: str) -> Any:
        """A write of the database (``what`` it writes, for the message): a full disk raises
        :class:`~spade_core.disk_space.DiskFullError` naming it."""
        self.writes += 1
        return writing(self.path, f"the environment memory's {what}")

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already (a failed ``COMMIT`` on a full
        disk rolls back by itself; a second ``ROLLBACK`` would hide the real error)."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    @contextmanager
    def _transaction(self, what: str) -> Iterator[None]:
        """One write transaction (``what`` it writes, for a full disk's message), under the
        lock: committed when the block ends, rolled back if it raises."""
        with self._lock, self._writing(what):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    # -- metadata -------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock, self._writing(f"setting {key!r}"):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- writing --------------------------------------------------------------------------------

    def _insert(self, record: EnvRecord, embedding: np.ndarray | None,
                fingerprint: str | None, indexed: bool) -> bool:
        existing = self.conn.execute("SELECT seq FROM envs WHERE id = ?", (record.id,)).fetchone()
        now = time.time()
        if existing:
            self.conn.execute("UPDATE envs SET times_proposed = times_proposed + 1, "
                              "updated_at = ? WHERE id = ?", (now, record.id))
            return False
        index_id = self._next_index_id() if indexed else None
        self.conn.execute(
            "INSERT INTO envs (id, family, status, doc_id, description, verdict_category, "
            "verdict_message, hint, source, fingerprint, duplicate_of, duplicate_similarity, "
            "stats, times_proposed, created_at, updated_at, regret, win_rate, designer_reward, "
            "index_id, embedding, skill, level, repairs) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (record.id, record.family, record.status, record.doc_id, record.description,
             record.verdict_category, record.verdict_message, record.hint, record.source,
             fingerprint, record.duplicate_of, record.duplicate_similarity,
             json.dumps(record.stats), record.times_proposed, record.created_at or now,
             record.updated_at or now, record.stats.get("regret"), record.stats.get("win_rate"),
             record.stats.get("designer_reward"), index_id, _blob(embedding), record.skill,
             int(record.level), int(record.repairs)))
        for entry in record.history:  # a record restored or imported with its play history
            self._insert_iteration(record.id, entry)
        return True

    def _insert_iteration(self, env_id: str, entry: EnvIteration) -> None:
        """One history entry per environment and iteration: a second play of the same program in
        one iteration (designed twice) joins the first's entry, its plays appended; the figures
        and designer reward are the latest play's."""
        row = self.conn.execute("SELECT hinted, unhinted FROM iterations WHERE env_id = ? AND "
                                "iteration = ?", (env_id, entry.iteration)).fetchone()
        hinted, unhinted = list(entry.hinted), list(entry.unhinted)
        if row is not None:
            hinted, unhinted = json.loads(row[0]) + hinted, json.loads(row[1]) + unhinted
        self.conn.execute(
            "INSERT OR REPLACE INTO iterations VALUES (?,?,?,?,?,?,?)",
            (env_id, entry.iteration, json.dumps(hinted), json.dumps(unhinted),
             json.dumps(entry.figures), entry.designer_reward, entry.at))

    def _next_index_id(self) -> int:
        row = self.conn.execute("SELECT COALESCE(MAX(index_id), 0) FROM envs").fetchone()
        return int(row[0]) + 1

    def insert(self, record: EnvRecord, embedding: np.ndarray | None, fingerprint: str | None,
               indexed: bool) -> bool:
        """Insert one record in its own transaction; ``False`` (and ``times_proposed`` + 1) when
        the id is already stored."""
        with self._transaction(f"record of environment {record.id}"):
            inserted = self._insert(record, embedding, fingerprint, indexed)
        return inserted

    def record_iteration(self, env_id: str, entry: EnvIteration, stats: dict[str, Any],
                         status: str, enter_index: bool) -> int | None:
        """Store one iteration's play and the record's new statistics and status in one
        transaction; returns the new ``index_id`` when the record entered the dedupe index."""
        if status not in ENV_STATUSES:
            raise ValueError(f"unknown status {status!r}; one of {', '.join(ENV_STATUSES)}")
        with self._transaction(f"play of environment {env_id} in iteration "
                               f"{entry.iteration}"):
            self._insert_iteration(env_id, entry)
            index_id = None
            if enter_index:
                row = self.conn.execute("SELECT index_id, embedding FROM envs WHERE id = ?",
                                        (env_id,)).fetchone()
                if row and row[0] is None and row[1] is not None:
                    index_id = self._next_index_id()
            self.conn.execute(
                "UPDATE envs SET stats = ?, status = ?, updated_at = ?, regret = ?, "
                "win_rate = ?, designer_reward = ?, index_id = COALESCE(index_id, ?) "
                "WHERE id = ?",
                (json.dumps(stats), status, entry.at, stats.get("regret"),
                 stats.get("win_rate"), stats.get("designer_reward"), index_id, env_id))
        return index_id

    def add_figures(self, env_id: str, iteration: int, figures: dict[str, float]) -> bool:
        """Merge ``figures`` into the figures of one history entry; returns whether it exists."""
        with self._lock, self._writing(f"figures of environment {env_id}"):
            row = self.conn.execute("SELECT figures FROM iterations WHERE env_id = ? AND "
                                    "iteration = ?", (env_id, iteration)).fetchone()
            if row is None:
                return False
            self.conn.execute("UPDATE iterations SET figures = ? WHERE env_id = ? AND "
                              "iteration = ?",
                              (json.dumps(json.loads(row[0]) | figures), env_id, iteration))
            return True

    def set_status(self, env_id: str, status: str) -> bool:
        """Set one record's status; returns whether the record exists."""
        if status not in ENV_STATUSES:
            raise ValueError(f"unknown status {status!r}; one of {', '.join(ENV_STATUSES)}")
        with self._lock, self._writing(f"status of environment {env_id}"):
            cursor = self.conn.execute("UPDATE envs SET status = ?, updated_at = ? WHERE id = ?",
                                       (str(status), time.time(), env_id))
            return cursor.rowcount > 0

    def clear(self) -> None:
        """Delete every record and its history in one transaction (settings in ``meta`` stay)."""
        with self._transaction("records (deleting them)"):
            self.conn.execute("DELETE FROM iterations")
            self.conn.execute("DELETE FROM envs")

    # -- snapshots ------------------------------------------------------------------------------

    def backup_to(self, target: Path) -> None:
        """Write a consistent copy of the database to ``target`` (SQLite's online backup: the
        copy is one point in time even while this process keeps writing between calls)."""
        target = Path(target)
        target.unlink(missing_ok=True)
        with self._lock:
            destination = sqlite3.connect(target)
            try:
                self.conn.backup(destination)
            finally:
                destination.close()

    def restore_from(self, snapshot: Path) -> None:
        """Replace the whole database with the snapshot at ``snapshot`` (a file
        :meth:`backup_to` wrote), through this open connection: one write transaction, so a
        failure leaves the database as it was, and the writer lock is never let go."""
        if self.readonly:
            raise sqlite3.OperationalError(f"{self.folder} is open read-only; cannot restore")
        source = open_snapshot(snapshot)
        try:
            with self._lock, self._writing(f"records (restoring the snapshot {snapshot})"):
                source.backup(self.conn)
        finally:
            source.close()

    # -- reading --------------------------------------------------------------------------------

    def _record(self, row: tuple, with_history: bool = True) -> EnvRecord:
        (env_id, family, status, doc_id, description, vcat, vmsg, hint, source, dup_of, dup_sim,
         stats, times, created, updated, emb, skill, level, repairs) = row
        vector = _vector(emb)
        record = EnvRecord(
            id=env_id, source=source, family=family, status=status, doc_id=doc_id,
            description=description, verdict_category=vcat, verdict_message=vmsg, hint=hint,
            stats=json.loads(stats), duplicate_of=dup_of, duplicate_similarity=dup_sim,
            created_at=created, updated_at=updated,
            embedding=None if vector is None else vector.tolist(), times_proposed=times,
            skill=skill, level=level, repairs=repairs)
        if with_history:
            record.history = self.history(env_id)
        return record

    def history(self, env_id: str) -> list[EnvIteration]:
        rows = self.conn.execute(
            "SELECT iteration, hinted, unhinted, figures, designer_reward, at FROM iterations "
            "WHERE env_id = ? ORDER BY iteration", (env_id,)).fetchall()
        return [EnvIteration(iteration=r[0], hinted=json.loads(r[1]), unhinted=json.loads(r[2]),
                             figures=json.loads(r[3]), designer_reward=r[4], at=r[5])
                for r in rows]

    def get(self, env_id: str) -> EnvRecord | None:
        with self._lock:
            row = self.conn.execute(f"SELECT {self._columns} FROM envs WHERE id = ?",
                                    (env_id,)).fetchone()
            return self._record(row) if row else None

    def index_id_of(self, env_id: str) -> int | None:
        row = self.conn.execute("SELECT index_id FROM envs WHERE id = ?", (env_id,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def status_of(self, env_id: str) -> str | None:
        row = self.conn.execute("SELECT status FROM envs WHERE id = ?", (env_id,)).fetchone()
        return row[0] if row else None

    def by_index_ids(self, index_ids: Sequence[int]) -> dict[int, EnvRecord]:
        """Records of the given index ids (without history), by index id."""
        if not index_ids:
            return {}
        marks = ",".join("?" * len(index_ids))
        with self._lock:
            rows = self.conn.execute(f"SELECT index_id, {self._columns} FROM envs "
                                     f"WHERE index_id IN ({marks})",
                                     [int(i) for i in index_ids]).fetchall()
        return {r[0]: self._record(r[1:], with_history=False) for r in rows}

    def fill_fingerprints(self, fingerprint: Callable[[str], str]) -> int:
        """Store ``fingerprint(source)`` for every record stored without one (a memory written
        without structural matching, opened with it); returns how many were filled."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT id, source FROM envs WHERE fingerprint IS NULL").fetchall()
            if not rows:
                return 0
            with self._transaction(f"fingerprints of {len(rows)} records"):
                self.conn.executemany("UPDATE envs SET fingerprint = ? WHERE id = ?",
                                      [(fingerprint(source), env_id) for env_id, source in rows])
            return len(rows)

    def by_fingerprint(self, fingerprint: str, statuses: Sequence[str]) -> EnvRecord | None:
        marks = ",".join("?" * len(statuses))
        with self._lock:
            row = self.conn.execute(
                f"SELECT {self._columns} FROM envs WHERE fingerprint = ? AND status IN ({marks}) "
                "ORDER BY seq LIMIT 1", (fingerprint, *statuses)).fetchone()
        return self._record(row, with_history=False) if row else None

    def ranked(self, statuses: Sequence[str], k: int, family: str | None, order: str,
               win_range: tuple[float, float] | None = None) -> list[EnvRecord]:
        """Up to ``k`` records with a status in ``statuses`` (and ``family``, and a latest win
        rate inside ``win_range``), by ``order`` (an SQL ORDER BY clause over the envs columns
        chosen by the caller, never user text)."""
        where, params = f"status IN ({','.join('?' * len(statuses))})", list(statuses)
        if win_range is not None:
            where += " AND win_rate BETWEEN ? AND ?"
            params.extend(win_range)
        return self._select(where, params, family, None, order, k)

    def played(self, family: str | None, skill: str | None, where: str,
               params: Sequence[Any], order: str, limit: int | None = None) -> list[EnvRecord]:
        """Records with a win rate (played), of ``family`` and ``skill`` when given, matching
        ``where`` (an SQL condition over the envs columns chosen by the caller, never user text,
        with ``params``), by ``order``, at most ``limit``."""
        return self._select(f"win_rate IS NOT NULL AND ({where})", list(params), family, skill,
                            order, limit)

    def _select(self, where: str, params: list[Any], family: str | None, skill: str | None,
                order: str, limit: int | None) -> list[EnvRecord]:
        """The one query builder of :meth:`ranked` and :meth:`played`: records matching
        ``where`` (caller-chosen SQL, values as ``params``), narrowed to ``family`` and ``skill``
        when given, by ``order``, at most ``limit``, without history."""
        sql = f"SELECT {self._columns} FROM envs WHERE {where}"
        for column, value in (("family", family), ("skill", skill)):
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        sql += f" ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._lock:
            rows = self.conn.execute(sql, params).fetchall()
        return [self._record(r, with_history=False) for r in rows]

    def _pages(self, columns: str, key: str, after: Any, filters: str = "",
               params: Sequence[Any] = (), batch: int = 1000) -> Iterator[list[tuple]]:
        """Rows of ``SELECT key, columns FROM envs WHERE key > after AND filters`` in pages of
        ``batch``, ordered by ``key``; each page resumes after the last key (keyset paging), so a
        scan never holds the lock for long and never skips or repeats a row."""
        last = after
        while True:
            with self._lock:
                rows = self.conn.execute(
                    f"SELECT {key}, {columns} FROM envs WHERE {key} > ?{filters} "
                    f"ORDER BY {key} LIMIT ?", (last, *params, batch)).fetchall()
            if not rows:
                return
            yield rows
            last = rows[-1][0]

    def index_rows(self, after: int = 0, upto: int | None = None, batch: int = 50_000
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(index_ids, vectors)`` batches of indexed records with ``after < index_id <= upto``."""
        filters, params = ("", ()) if upto is None else (" AND index_id <= ?", (upto,))
        for rows in self._pages("embedding", "index_id", after, filters, params, batch):
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            yield ids, vectors.reshape(len(rows), -1)

    def index_size(self, upto: int | None = None) -> int:
        if upto is None:
            row = self.conn.execute("SELECT COUNT(*) FROM envs WHERE index_id IS NOT NULL")
        else:
            row = self.conn.execute("SELECT COUNT(*) FROM envs WHERE index_id <= ?", (upto,))
        return int(row.fetchone()[0])

    def embeddings(self, statuses: Sequence[str] | None = None, family: str | None = None,
                   batch: int = 50_000) -> Iterator[tuple[list[str], np.ndarray]]:
        """``(ids, vectors)`` batches of every embedded record matching the filters."""
        filters, params = " AND embedding IS NOT NULL", []
        if statuses:
            filters += f" AND status IN ({','.join('?' * len(statuses))})"
            params.extend(statuses)
        if family is not None:
            filters += " AND family = ?"
            params.append(family)
        for rows in self._pages("id, embedding", "seq", 0, filters, params, batch):
            vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
            yield [r[1] for r in rows], vectors.reshape(len(rows), -1)

    def records(self, with_history: bool = True, batch: int = 1000) -> Iterator[EnvRecord]:
        """Every record in insertion order."""
        for rows in self._pages(self._columns, "seq", 0, batch=batch):
            for row in rows:
                yield self._record(row[1:], with_history=with_history)

    def counts(self) -> dict[str, Any]:
        """Totals by status and by family, and the dedupe index size."""
        with self._lock:
            by_status = dict(self.conn.execute(
                "SELECT status, COUNT(*) FROM envs GROUP BY status").fetchall())
            by_family = {f: dict(zip(("total", "mastered"), (n, m))) for f, n, m in
                         self.conn.execute("SELECT family, COUNT(*), SUM(status = 'mastered') "
                                           "FROM envs GROUP BY family").fetchall()}
            total = self.conn.execute("SELECT COUNT(*), SUM(times_proposed) FROM envs").fetchone()
            iterations = self.conn.execute("SELECT COUNT(*) FROM iterations").fetchone()[0]
        return {"records": int(total[0]), "proposals": int(total[1] or 0),
                "by_status": {s: int(by_status.get(s, 0)) for s in ENV_STATUSES},
                "by_family": by_family, "dedupe_index": self.index_size(),
                "iterations_recorded": int(iterations)}

    def close(self) -> None:
        with self._lock:
            try:
                self.conn.close()
            finally:
                if self._lock_file is not None:
                    fcntl.flock(self._lock_file, fcntl.LOCK_UN)
                    self._lock_file.close()
                    self._lock_file = None

