"""Crash-safe file writes: readers see the old content or the new, never a mix, and a ``kill -9``
at any moment leaves no half-written file under the real name."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def write_atomic(path: Path, data: str | bytes, sync: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it (unless ``sync`` is false:
    then the file is whole or absent after a killed process, but not after a machine crash),
    then rename it into place.

    The temporary file is created with ``open`` (so the usual umask permissions apply) under a
    name unique to this process and thread.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(tmp, "wb") as fh:
            fh.write(raw)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def fsync_dir(folder: Path) -> None:
    """Make a rename inside ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_whole(path: Path, data: bytes, sync: bool = True) -> None:
    """Append ``data`` to ``path`` (created if missing) and fsync it (unless ``sync`` is false);
    a write that fails (the disk full) cuts the file back to where it ended (removes the file
    it created), so it never ends in a torn line."""
    existed = os.path.exists(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        end = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, end)
            if not existed:
                os.unlink(path)
            raise
    finally:
        os.close(fd)
