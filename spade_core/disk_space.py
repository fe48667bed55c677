"""A full disk at a write of a run, said plainly instead of a traceback: which file was being
written and what it held, the free space on its disk and what the write needed, that nothing
written before is lost, and how to continue. Every write of a run goes through :func:`writing`
(the checkpoint's, the memory's, the run files'); the run's last resort, for a write of a plugin
or a library, is :func:`is_disk_full` on what reached it."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from spade_core.errors import SpadeError
from spade_core.messages import size_text

#: ``OSError`` numbers of a write that found no room: the disk, the user's quota, the process's
#: file-size limit.
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: What SQLite says when a write finds no room (result code ``SQLITE_FULL``).
SQLITE_FULL_TEXT = "database or disk is full"
#: The words of a full disk or quota, in the message of a library that raises no ``OSError``
#: (FAISS: ``RuntimeError: ... write error ... (No space left on device)``).
FULL_TEXTS = (os.strerror(errno.ENOSPC), os.strerror(errno.EDQUOT))


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc``, then the error it was raised from or while handling, and so on."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def full_write(exc: BaseException | None) -> BaseException | None:
    """The write that found no room in ``exc``'s chain (``exc`` itself, or an error it was
    raised from or while handling: libraries raise their own error while handling the
    ``OSError``): an ``OSError`` with a number of :data:`FULL_ERRNOS`, SQLite's
    ``SQLITE_FULL``, or a library's error whose message says the disk or quota is full
    (:data:`FULL_TEXTS`); ``None`` when there is none."""
    for link in _chain(exc):
        if isinstance(link, OSError):
            if link.errno in FULL_ERRNOS:
                return link
        elif isinstance(link, sqlite3.Error):
            if (getattr(link, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
                    or SQLITE_FULL_TEXT in str(link)):
                return link
        elif not isinstance(link, SpadeError) and any(text in str(link) for text in FULL_TEXTS):
            return link
    return None


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` is, or comes from, a write that found no room (:func:`full_write`)."""
    return full_write(exc) is not None


def free_bytes(path: Path) -> int | None:
    """Free bytes (for an unprivileged user) on the file system that holds ``path``, or would
    hold it: the nearest folder of it that exists; ``None`` when that cannot be read."""
    for folder in (Path(path), *Path(path).parents):
        if folder.exists():
            try:
                return shutil.disk_usage(folder).free
            except OSError:
                return None
    return None


def full_reason(exc: BaseException) -> str:
    """What the write that found no room said: ``No space left on device``, ``File too large``,
    ``database or disk is full``."""
    found = full_write(exc) or exc
    return (found.strerror if isinstance(found, OSError) and found.strerror else "") or str(found)


class DiskFullError(SpadeError):
    """A write of a run found no room (the disk, a quota, a file-size limit). The message names
    the file (``path``) and what it was to hold (``what``), the free space there and what the
    write needed when known (``needed``, bytes), what is kept (``kept``), and what to do once
    space is freed: run the command again or, once the run directory is known (:meth:`in_run`),
    continue the run."""

    def __init__(self, path: Path, what: str, *, reason: str, needed: int | None = None,
                 kept: str = "nothing of it was kept; what the run wrote before is intact",
                 run_dir: Path | None = None, free: int | None = None) -> None:
        self.path, self.what, self.reason = Path(path), what, reason
        self.needed, self.kept, self.run_dir = needed, kept, run_dir
        self.free = free_bytes(self.path) if free is None else free
        super().__init__(self._message())

    def _message(self) -> str:
        room = (f"{size_text(self.free)} free on its disk" if self.free is not None
                else "the free space on its disk could not be read")
        if self.needed:
            room += f", the write needed {size_text(self.needed)}"
        then = (f"continue the run with `spade run --resume {self.run_dir}`"
                if self.run_dir is not None else "run it again")
        return (f"could not write {self.what} ({self.path}): {self.reason} (the disk is full, or "
                f"a quota or file-size limit was reached); {room}; {self.kept}; free space, "
                f"then {then}")

    def in_run(self, run_dir: Path | None) -> "DiskFullError":
        """The same error, its message naming the run to continue (``None``: a run that cannot
        be continued, to run again)."""
        return DiskFullError(self.path, self.what, reason=self.reason, needed=self.needed,
                             kept=self.kept, run_dir=run_dir, free=self.free)


@contextmanager
def writing(path: Path, what: str, needed: int | None = None) -> Iterator[None]:
    """Run the write of ``path`` (``what``: what it holds, for the message; ``needed``: its
    size when known) in this block; a full disk ends it with a :class:`DiskFullError` raised
    from the original error, any other error passes unchanged. The block leaves the file as it
    was (atomic writes, a transaction, an append cut back)."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, DiskFullError) or not is_disk_full(exc):
            raise
        raise DiskFullError(path, what, reason=full_reason(exc), needed=needed) from exc


def as_disk_full(exc: BaseException, path: Path, what: str) -> DiskFullError | None:
    """``exc`` as a :class:`DiskFullError` when it is or comes from a full disk: the one a write
    of the run raised (a plugin may have wrapped it in its own error), else one for a write that
    did not go through :func:`writing` (a plugin's, a library's), named by the failed write's
    file when its error has one, else by ``path`` and ``what``; ``None`` for any other error."""
    for link in _chain(exc):
        if isinstance(link, DiskFullError):
            return link
    found = full_write(exc)
    if found is None:
        return None
    return DiskFullError(getattr(found, "filename", None) or path, what,
                         reason=full_reason(found))
