"""The run directory's writer (spade_core.selfplay.artifacts): the resolved config, metrics
appended line by line, environment files, and the summary replaced whole."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from spade_core.selfplay.artifacts import RunArtifacts


@dataclass
class _Figures:
    regret: float


def test_a_run_directorys_files(tmp_path):
    artifacts = RunArtifacts(tmp_path / "run")
    artifacts.create({"run": {"seed": 1}})
    assert yaml.safe_load((tmp_path / "run" / "config.resolved.yaml").read_text()) == \
        {"run": {"seed": 1}}
    artifacts.log_metrics({"iteration": 0, "figures": _Figures(0.5), "dir": Path("/x")})
    artifacts.log_metrics({"iteration": 1})
    artifacts.append_jsonl_rows("replays.jsonl", [])  # nothing: no file
    rows = [json.loads(line) for line in
            (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert rows == [{"iteration": 0, "figures": {"regret": 0.5}, "dir": "/x"}, {"iteration": 1}]
    assert not (tmp_path / "run" / "replays.jsonl").exists()

    artifacts.write_env("abc", "class A: ...", {"status": "frontier"})
    assert (artifacts.envs_dir / "abc.py").read_text() == "class A: ..."
    assert artifacts.add_env_details("abc", {"delayed": {"trained": True}})
    assert json.loads((artifacts.envs_dir / "abc.json").read_text()) == \
        {"status": "frontier", "delayed": {"trained": True}}
    assert not artifacts.add_env_details("missing", {"x": 1})

    # The same program proposed again (one program per arithmetic cell, a refused duplicate):
    # the latest record in abc.json, each one it replaced kept in abc.history.jsonl.
    artifacts.write_env("abc", "class A: ...", {"status": "duplicate", "iteration": 3})
    artifacts.write_env("abc", "class A: ...", {"status": "frontier", "iteration": 5})
    assert json.loads((artifacts.envs_dir / "abc.json").read_text()) == \
        {"status": "frontier", "iteration": 5}
    history = (artifacts.envs_dir / "abc.history.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in history] == [
        {"status": "frontier", "delayed": {"trained": True}},
        {"status": "duplicate", "iteration": 3}]

    artifacts.write_summary({"status": "running"})
    artifacts.write_summary({"status": "completed"})
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == {"status": "completed"}
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == \
        ["config.resolved.yaml", "envs", "metrics.jsonl", "summary.json"]  # no temporary file


def test_each_write_on_a_full_disk_names_its_file_and_leaves_it_as_it_was(tmp_path,
                                                                        monkeypatch):
    import os
    from types import SimpleNamespace

    import pytest

    import spade_core.atomic_files as atomic_files
    from spade_core.disk_space import DiskFullError

    from fakes.disk import FullDisk

    run = tmp_path / "run"
    artifacts = RunArtifacts(run)
    artifacts.create({"run": {"seed": 1}})
    artifacts.log_metrics({"iteration": 0})
    artifacts.write_env("e1", "class E: pass", {"iteration": 0})
    artifacts.write_summary({"status": "running"})
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    full_os = SimpleNamespace(**vars(os))  # os as the writes see it, on a full disk
    monkeypatch.setattr(atomic_files, "os", full_os)
    disk = FullDisk(monkeypatch).fail(full_os, "write").fail(full_os, "fsync")
    writes = {
        "1 line of metrics.jsonl": lambda: artifacts.log_metrics({"iteration": 1}),
        "2 lines of isolation.jsonl": lambda: artifacts.append_jsonl_rows(
            "isolation.jsonl", [{"a": 1}, {"b": 2}]),
        "environment e2's program": lambda: artifacts.write_env("e2", "x", {}),
        "environment e1's details": lambda: artifacts.add_env_details("e1", {"delayed": 1}),
        "the run's summary": lambda: artifacts.write_summary({"status": "failed"}),
        "the run's resolved config": lambda: artifacts.create({"run": {"seed": 2}}),
    }
    for what, write in writes.items():
        with pytest.raises(DiskFullError, match=f"could not write {what} "):
            write()
    assert disk.hits >= len(writes)
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_run_fsync_false_writes_the_same_files_without_waiting_for_the_disk(tmp_path,
                                                                             monkeypatch):
    """``run.fsync: false`` (the lab): no fsync at all, the same whole files; the default syncs
    each write."""
    import os

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    for sync, folder in ((False, "fast"), (True, "durable")):
        artifacts = RunArtifacts(tmp_path / folder, sync=sync)
        artifacts.create({"run": {"seed": 1}})
        artifacts.log_metrics({"iteration": 0})
        artifacts.write_env("abc", "class A: ...", {"status": "frontier"})
        if not sync:
            assert synced == []
    assert len(synced) == 4  # config, a metrics line, the program and its details
    for name in ("config.resolved.yaml", "metrics.jsonl", "envs/abc.py", "envs/abc.json"):
        assert (tmp_path / "fast" / name).read_bytes() == (tmp_path / "durable" / name).read_bytes()
