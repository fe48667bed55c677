"""Crash-safe writes (spade_core.atomic_files): a write replaces the file whole, and one that fails
leaves the old content and no temporary file behind."""

from __future__ import annotations

import os

import pytest

from spade_core.atomic_files import write_atomic


def test_a_write_replaces_the_file_and_creates_its_folder(tmp_path):
    path = tmp_path / "deep" / "state.json"
    write_atomic(path, "old")
    write_atomic(path, b"new")
    assert path.read_text() == "new"
    assert [p.name for p in path.parent.iterdir()] == ["state.json"]


def test_a_failed_write_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    write_atomic(path, "old")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("spade_core.atomic_files.os.fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, "new, half written")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # the temporary file is gone


def test_an_append_that_fails_cuts_the_file_back_to_its_old_end(tmp_path, monkeypatch):
    from spade_core.atomic_files import append_whole

    path = tmp_path / "metrics.jsonl"
    append_whole(path, b'{"iteration": 0}\n')
    real_write = os.write

    def half_then_full(fd, data):  # the disk fills in the middle of the line
        real_write(fd, bytes(data[:5]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("spade_core.atomic_files.os.write", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        append_whole(tmp_path / "new.jsonl", b'{"iteration": 0}\n')
    assert not (tmp_path / "new.jsonl").exists()  # created by the failed append: removed
    with pytest.raises(OSError, match="No space left"):
        append_whole(path, b'{"iteration": 1}\n')
    monkeypatch.undo()
    assert path.read_bytes() == b'{"iteration": 0}\n'  # no torn line
    append_whole(path, b'{"iteration": 1}\n')
    assert path.read_bytes().splitlines() == [b'{"iteration": 0}', b'{"iteration": 1}']
