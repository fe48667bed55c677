"""spade_core/disk_space.py: a full disk is recognised however it is raised (an ``OSError``,
SQLite, a library's own error raised while handling one) and said with the file, the free space
and what to do; any other error passes unchanged."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from spade_core.disk_space import DiskFullError, as_disk_full, is_disk_full, writing
from spade_core.errors import PluginError

from fakes.disk import enospc, sqlite_full


def _raised_while_handling(first: BaseException, then: BaseException) -> BaseException:
    try:
        try:
            raise first
        except BaseException:
            raise then
    except BaseException as exc:
        return exc


def test_a_full_disk_is_recognised_however_it_is_raised():
    assert is_disk_full(enospc())
    assert is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert is_disk_full(OSError(errno.EFBIG, "File too large"))
    assert is_disk_full(sqlite_full())
    assert is_disk_full(_raised_while_handling(enospc(), RuntimeError("file write failed")))
    assert is_disk_full(RuntimeError("Error in faiss::FileIOWriter: write error "
                                     "(No space left on device)"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(sqlite3.OperationalError("database is locked"))
    assert not is_disk_full(ValueError("full of surprises"))
    assert not is_disk_full(None)


def test_writing_names_the_file_the_free_space_and_the_size(tmp_path):
    path = tmp_path / "metrics.jsonl"
    with pytest.raises(DiskFullError) as full:
        with writing(path, "1 line of metrics.jsonl", needed=2500):
            raise enospc()
    message = str(full.value)
    assert message.startswith(f"could not write 1 line of metrics.jsonl ({path}): No space left "
                              "on device (the disk is full, or a quota or file-size limit was "
                              "reached); ")
    assert " free on its disk, the write needed 2.5 KB; nothing of it was kept" in message
    assert message.endswith("free space, then run it again")
    assert isinstance(full.value.__cause__, OSError)
    assert str(full.value.in_run(tmp_path)).endswith(
        f"free space, then continue the run with `spade run --resume {tmp_path}`")
    assert full.value.free is not None and full.value.path == path


def test_writing_passes_other_errors_and_its_own_unchanged(tmp_path):
    with pytest.raises(PermissionError):
        with writing(tmp_path / "a", "a"):
            raise PermissionError(errno.EACCES, "Permission denied")
    inner = DiskFullError(tmp_path / "inner", "the inner file", reason="No space left on device")
    with pytest.raises(DiskFullError) as full:
        with writing(tmp_path / "outer", "the outer file"):
            raise inner
    assert full.value is inner


def test_the_free_space_is_read_where_the_file_would_be(tmp_path):
    full = DiskFullError(tmp_path / "not" / "yet" / "there.json", "x", reason="r")
    assert full.free is not None and full.free > 0


def test_as_disk_full_finds_the_runs_own_error_inside_a_plugins_and_names_a_raw_write(tmp_path):
    said = DiskFullError(tmp_path / "memory.sqlite", "the memory", reason="database or disk "
                         "is full")
    wrapped = _raised_while_handling(said, PluginError("memory 'faiss' failed to start"))
    assert as_disk_full(wrapped, tmp_path, "a file of the run") is said
    raw = as_disk_full(enospc("/scratch/cache.bin"), tmp_path, "a file of the run")
    assert raw.path.as_posix() == "/scratch/cache.bin" and raw.what == "a file of the run"
    unnamed = as_disk_full(RuntimeError("write error (No space left on device)"), tmp_path,
                           "a file of the run")
    assert unnamed.path == tmp_path
    assert as_disk_full(ValueError("x"), tmp_path, "a file of the run") is None
