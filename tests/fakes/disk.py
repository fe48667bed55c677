"""A full disk for tests: :class:`FullDisk` makes chosen writes fail the way a full disk fails
them (``OSError`` ENOSPC, or SQLite's "database or disk is full") until :meth:`FullDisk.free`
is called, the stand-in for a person freeing space."""

from __future__ import annotations

import errno
import functools
import os
import sqlite3
from collections.abc import Callable
from typing import Any


def enospc(filename: str | None = None) -> OSError:
    """The error a write on a full disk raises (``os.write`` names no file)."""
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), *([filename] if filename else []))


def sqlite_full() -> sqlite3.OperationalError:
    """What SQLite raises when a write finds the disk full."""
    return sqlite3.OperationalError("database or disk is full")


class FullDisk:
    """Writes made to fail with ``monkeypatch``: :meth:`fail` wraps ``owner.name`` (a module's
    function or a class's method) so that, while the disk is full, a call that ``when`` picks
    raises ``error()`` instead of writing; ``hits`` counts those calls."""

    def __init__(self, monkeypatch: Any) -> None:
        self.monkeypatch = monkeypatch
        self.full = True
        self.hits = 0

    def fail(self, owner: Any, name: str, when: Callable[..., bool] = lambda *a, **k: True,
             error: Callable[[], BaseException] = enospc) -> "FullDisk":
        original = getattr(owner, name)

        @functools.wraps(original)  # the same signature: interface checks still pass
        def write(*args: Any, **kwargs: Any) -> Any:
            if self.full and when(*args, **kwargs):
                self.hits += 1
                raise error()
            return original(*args, **kwargs)

        self.monkeypatch.setattr(owner, name, write)
        return self

    def free(self) -> None:
        """Space is freed: every write goes through again."""
        self.full = False
