"""``Database``: the in-memory SQLite database a tool-use episode may keep its state in.

Trusted prelude source, run unrestricted in the sandbox worker before ``tool_use_base.py``. A
program never holds the ``sqlite3`` module or a connection: ``ToolUseBaseEnv.create_database``
gives it a :class:`Database`, whose connection lives only in closures (no attribute path leads to
it; the sandbox refuses ``__closure__`` and every other dunder). The connection is memory only
and closed in: an authorizer allows reading and writing tables, views, indexes, triggers,
transactions and a list of deterministic SQL functions, and denies ``ATTACH``/``DETACH``,
``PRAGMA``, virtual tables, temporary objects and every other function (``load_extension``,
``random``...); ``setlimit`` caps string, SQL, column and expression sizes and forbids attached
databases; ``max_page_count`` caps the database's size; a progress handler stops a statement
that runs past its budget of SQLite VM instructions (work done, so the same statement is stopped
at the same point however busy the machine is), with a generous wall-clock backstop for
instructions that are slow in themselves. Errors reach the program as
:class:`DatabaseError` (an ``Exception``), so a tool can turn them into an observation.
"""

import hashlib as _hashlib
import sqlite3 as _sqlite3
import time as _time

__all__ = list(globals().get("__all__", [])) + ["Database", "DatabaseError"]

#: Authorizer actions a program's SQL may take (everything else is denied).
_ALLOWED_ACTIONS = frozenset({
    _sqlite3.SQLITE_SELECT, _sqlite3.SQLITE_READ, _sqlite3.SQLITE_INSERT,
    _sqlite3.SQLITE_UPDATE, _sqlite3.SQLITE_DELETE, _sqlite3.SQLITE_CREATE_TABLE,
    _sqlite3.SQLITE_CREATE_INDEX, _sqlite3.SQLITE_CREATE_VIEW, _sqlite3.SQLITE_CREATE_TRIGGER,
    _sqlite3.SQLITE_DROP_TABLE, _sqlite3.SQLITE_DROP_INDEX, _sqlite3.SQLITE_DROP_VIEW,
    _sqlite3.SQLITE_DROP_TRIGGER, _sqlite3.SQLITE_ALTER_TABLE, _sqlite3.SQLITE_TRANSACTION,
    _sqlite3.SQLITE_SAVEPOINT, getattr(_sqlite3, "SQLITE_RECURSIVE", 33),
})
#: SQL functions a program may call: deterministic core, date and JSON functions. Not
#: ``random``/``randomblob`` (a seed must give one final state), not ``load_extension``.
ALLOWED_FUNCTIONS = frozenset({
    "abs", "avg", "char", "coalesce", "count", "group_concat", "hex", "ifnull", "iif", "instr",
    "length", "like", "glob", "lower", "ltrim", "max", "min", "nullif", "printf", "format",
    "quote", "replace", "round", "rtrim", "substr", "substring", "sum", "total", "trim",
    "typeof", "unicode", "upper", "changes", "last_insert_rowid", "total_changes",
    "date", "time", "datetime", "julianday", "strftime", "unixepoch",
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
    "first_value", "last_value", "nth_value",
    "json", "json_array", "json_array_length", "json_extract", "json_insert", "json_object",
    "json_patch", "json_remove", "json_replace", "json_set", "json_type", "json_valid",
    "json_quote", "json_group_array", "json_group_object",
})
#: ``setlimit`` caps (SQLite's own errors when exceeded: "string or blob too big", ...).
LIMITS = {
    "SQLITE_LIMIT_LENGTH": 1_000_000, "SQLITE_LIMIT_SQL_LENGTH": 100_000,
    "SQLITE_LIMIT_COLUMN": 100, "SQLITE_LIMIT_EXPR_DEPTH": 100,
    "SQLITE_LIMIT_COMPOUND_SELECT": 50, "SQLITE_LIMIT_FUNCTION_ARG": 16,
    "SQLITE_LIMIT_ATTACHED": 0, "SQLITE_LIMIT_LIKE_PATTERN_LENGTH": 1_000,
    "SQLITE_LIMIT_VARIABLE_NUMBER": 1_000, "SQLITE_LIMIT_TRIGGER_DEPTH": 10,
    "SQLITE_LIMIT_WORKER_THREADS": 0,
}
#: Database size cap: pages of :data:`PAGE_SIZE` bytes (16 MiB); beyond it "database or disk is
#: full".
MAX_PAGES = 4096
PAGE_SIZE = 4096
#: One statement's budget of SQLite VM instructions, counted by the progress handler: what
#: decides whether a statement may finish, the same on an idle machine and a loaded one (20M
#: instructions take about 0.3-0.5 s on one idle core here).
STATEMENT_INSTRUCTIONS = 20_000_000
#: Wall-clock backstop of one statement (checked by the same handler), for instructions that are
#: slow in themselves (big sorts, long strings): about 20 times what the whole instruction
#: budget takes on an idle core, so load alone does not reach it. The sandbox's call limits
#: (``step_seconds``, ``load_seconds``) and its SIGKILL still end a call whose statement never
#: returns to SQLite.
STATEMENT_BACKSTOP_SECONDS = 10.0
#: Rows one query may return to the program.
MAX_ROWS = 10_000
#: The progress handler runs every this many VM instructions (its calls count the work).
_PROGRESS_EVERY = 10_000


class DatabaseError(Exception):
    """What a refused, failed or stopped SQL statement raises in a program (SQLite's message)."""


def _plain(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return value


def _check_params(params):
    if params is None:
        return ()
    if isinstance(params, dict):
        items = params.values()
    elif isinstance(params, (list, tuple)):
        items = params
    else:
        raise DatabaseError("params must be a list, tuple or dict of values, got "
                            f"{type(params).__name__}")
    for value in items:
        if value is not None and type(value) not in (int, float, str, bool, bytes):
            raise DatabaseError("SQL parameters must be None, int, float, str, bool or bytes, "
                                f"got {type(value).__name__}")
    return dict(params) if isinstance(params, dict) else tuple(params)


def _connect():
    """A fresh locked-down ``:memory:`` connection and the closures that use it."""
    conn = _sqlite3.connect(":memory:", isolation_level=None)
    for name, value in LIMITS.items():
        category = getattr(_sqlite3, name, None)
        if category is not None:
            conn.setlimit(category, value)
    # Trusted settings, before the authorizer denies every PRAGMA: temporary b-trees (big sorts)
    # stay in memory, the size is capped, foreign keys are enforced.
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    conn.execute(f"PRAGMA max_page_count = {MAX_PAGES}")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA trusted_schema = OFF")
    budget = {"deadline": 0.0, "instructions": 0, "stopped": None}

    def authorize(action, arg1, arg2, db_name, trigger):
        if action == _sqlite3.SQLITE_FUNCTION:
            return _sqlite3.SQLITE_OK if str(arg2).lower() in ALLOWED_FUNCTIONS \
                else _sqlite3.SQLITE_DENY
        if action not in _ALLOWED_ACTIONS:
            return _sqlite3.SQLITE_DENY
        if db_name not in (None, "main"):  # "temp" or an attached name
            return _sqlite3.SQLITE_DENY
        return _sqlite3.SQLITE_OK

    def progress():
        budget["instructions"] += _PROGRESS_EVERY
        if budget["instructions"] > STATEMENT_INSTRUCTIONS:
            budget["stopped"] = (f"it ran more than {STATEMENT_INSTRUCTIONS:,} SQLite "
                                 "instructions")
            return 1
        if _time.monotonic() > budget["deadline"]:
            budget["stopped"] = (f"it ran longer than {STATEMENT_BACKSTOP_SECONDS:g} s of wall "
                                 "time")
            return 1
        return 0

    conn.set_authorizer(authorize)
    conn.set_progress_handler(progress, _PROGRESS_EVERY)
    state = {"open": True}

    def run(kind, sql, params=()):
        if not state["open"]:
            raise DatabaseError("the database of this episode is closed")
        if not isinstance(sql, str):
            raise DatabaseError(f"SQL must be a str, got {type(sql).__name__}")
        budget["deadline"] = _time.monotonic() + STATEMENT_BACKSTOP_SECONDS
        budget["instructions"] = 0
        budget["stopped"] = None
        try:
            if kind == "script":
                conn.executescript(sql)
                return None
            cursor = conn.execute(sql, _check_params(params))
            if kind == "execute":
                return cursor.rowcount
            names = [d[0] for d in cursor.description or ()]
            rows = cursor.fetchmany(MAX_ROWS + 1)
            if len(rows) > MAX_ROWS:
                raise DatabaseError(f"the query returned more than {MAX_ROWS} rows; add a "
                                    "WHERE or LIMIT")
            return [dict(zip(names, map(_plain, row))) for row in rows]
        except _sqlite3.Error as exc:
            stopped = budget["stopped"]
            if stopped is not None:
                raise DatabaseError(f"the statement was stopped: {stopped}") from None
            raise DatabaseError(str(exc)) from None
        except (OverflowError, ValueError) as exc:
            raise DatabaseError(str(exc)) from None

    def close():
        if state["open"]:
            state["open"] = False
            conn.close()

    return run, close


class Database:
    """The episode's in-memory SQLite database.

    ``query(sql, params)`` returns rows as dicts, ``query_one`` the first row or ``None``,
    ``scalar`` the first column of the first row, ``execute`` runs a write and returns the rows
    it changed, ``insert_rows(table, rows)`` adds rows (tuples or dicts), ``transaction()`` is a
    ``with`` block that commits or rolls back, ``table(name)`` lists a table's rows in primary
    key order. Pass values as parameters (``?`` or ``:name``), never by formatting them into the
    SQL. Every failure is a :class:`DatabaseError` with SQLite's message."""

    def __init__(self, schema, rows=None):
        run, close = _connect()
        self._run = run
        self._close = close
        if not isinstance(schema, str) or not schema.strip():
            close()
            raise DatabaseError("create_database needs the schema as SQL text (CREATE TABLE ...)")
        try:
            run("script", schema)
            for table, table_rows in (rows or {}).items():
                self.insert_rows(table, table_rows)
        except BaseException:
            close()
            raise

    # -- reading --------------------------------------------------------------------------------

    def query(self, sql, params=()):
        """Every row of ``sql`` as a dict ``{column: value}`` (at most 10,000 rows)."""
        return self._run("query", sql, params)

    def query_one(self, sql, params=()):
        """The first row of ``sql`` as a dict, or ``None`` when there is none."""
        rows = self._run("query", sql, params)
        return rows[0] if rows else None

    def scalar(self, sql, params=()):
        """The first column of the first row of ``sql``, or ``None`` when there is none."""
        row = self.query_one(sql, params)
        return next(iter(row.values())) if row else None

    def tables(self):
        """The names of the database's tables, sorted."""
        return [r["name"] for r in self._run(
            "query", "SELECT name FROM sqlite_schema WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name")]

    def table(self, name):
        """Every row of table ``name``, as dicts, in rowid (or primary key) order."""
        if name not in self.tables():
            raise DatabaseError(f"no such table: {name}")
        quoted = '"' + name.replace('"', '""') + '"'
        try:
            return self._run("query", f"SELECT * FROM {quoted} ORDER BY rowid")
        except DatabaseError:  # a WITHOUT ROWID table
            return self._run("query", f"SELECT * FROM {quoted} ORDER BY 1")

    def digest(self):
        """A SHA-256 of every table's rows: equal digests, equal final states."""
        h = _hashlib.sha256()
        for name in self.tables():
            h.update(repr((name, self.table(name))).encode("utf-8", "backslashreplace"))
        return h.hexdigest()

    # -- writing --------------------------------------------------------------------------------

    def execute(self, sql, params=()):
        """Run one statement (INSERT, UPDATE, DELETE, CREATE ...); the number of rows changed
        (-1 for statements that change none). ``INSERT ... RETURNING id`` goes through
        :meth:`query` to read the new key."""
        return self._run("execute", sql, params)

    def insert_rows(self, table, rows):
        """Insert ``rows`` (tuples in column order, or dicts by column name) into ``table``;
        returns how many were inserted."""
        if not isinstance(table, str) or not table.replace("_", "").isalnum():
            raise DatabaseError(f"bad table name {table!r}: letters, digits and _ only")
        count = 0
        for row in rows or ():
            if isinstance(row, dict):
                columns = list(row)
                for column in columns:
                    if not isinstance(column, str) or not column.replace("_", "").isalnum():
                        raise DatabaseError(f"bad column name {column!r} for table {table}")
                sql = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                       f"({', '.join('?' for _ in columns)})")
                self._run("execute", sql, tuple(row.values()))
            elif isinstance(row, (list, tuple)):
                sql = f"INSERT INTO {table} VALUES ({', '.join('?' for _ in row)})"
                self._run("execute", sql, tuple(row))
            else:
                raise DatabaseError(f"a row of {table} must be a tuple or a dict, got "
                                    f"{type(row).__name__}")
            count += 1
        return count

    def transaction(self):
        """``with db.transaction(): ...``: the statements inside commit together, or none of
        them does when the block raises."""
        return _Transaction(self._run)

    def close(self):
        """Free the database (``reset`` and ``close`` of the environment do it)."""
        self._close()


class _Transaction:
    def __init__(self, run):
        self._run = run

    def __enter__(self):
        self._run("execute", "BEGIN")
        return self

    def __exit__(self, kind, value, traceback):
        self._run("execute", "ROLLBACK" if kind is not None else "COMMIT")
        return False
