"""A full disk at each kind of write of a run (the run files, ``metrics.jsonl``, the memory's
SQLite, a checkpoint, a library's own write): the run ends with a message naming the file and
the free space, nothing written before is lost, and once space is freed ``--resume`` continues to
the same end as an uninterrupted run. Runs the fake self-play components with the real memory;
the full disk is :class:`fakes.disk.FullDisk`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spade_core.selfplay.artifacts as artifacts
from envmemory.store import RecordStore
from spade_core.config.load import resolve_config
from spade_core.disk_space import DiskFullError
from spade_core.selfplay.runner import run

from fakes.disk import FullDisk, enospc, sqlite_full
from fakes.training import (
    FakeCountingTrainer,
    load_training_plugins,
    memory_rows,
    metrics_rows,
    run_in_process,
    training_config,
)

ITERATIONS = 3


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[list[int], list[tuple]]:
    """What the run leaves without a fault: its iterations and its memory."""
    run_dir = run_in_process(tmp_path_factory.mktemp("whole") / "run", ITERATIONS)
    return [r["iteration"] for r in metrics_rows(run_dir)], memory_rows(run_dir)


def _run(run_dir: Path, resume: bool = False) -> list[str]:
    messages: list[str] = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, ITERATIONS), loaded.registry, "t.yaml")
    try:
        run(resolved, loaded, report=messages.append, resume=run_dir if resume else None)
    finally:
        messages.append("(end)")
    return messages


#: Each kind of write: (what fails, how to pick the call, the file the message names).
WRITES = {
    "metrics.jsonl": (lambda disk: disk.fail(
        artifacts, "append_whole",
        lambda path, data: path.name == "metrics.jsonl" and b'"iteration": 1,' in data),
        "1 line of metrics.jsonl ({run}/metrics.jsonl)"),
    "envs/": (lambda disk: disk.fail(
        artifacts, "write_atomic",
        lambda path, data: path.parent.name == "envs" and b'"iteration": 1,' in data),
        "'s details ({run}/envs/"),
    "the memory's SQLite": (lambda disk: disk.fail(
        RecordStore, "_insert_iteration", lambda store, env_id, entry: entry.iteration == 1,
        error=sqlite_full),
        "the environment memory's play of environment"),
    "a checkpoint's memory snapshot": (lambda disk: disk.fail(
        RecordStore, "backup_to", lambda store, target: "iter-000002" in str(target),
        error=sqlite_full),
        "checkpoint iter-000002 ({run}/checkpoints/iter-000002): database or disk is full"),
    "a library's own write": (lambda disk: disk.fail(
        FakeCountingTrainer, "train", lambda trainer, samples: trainer.updates == 1,
        error=lambda: enospc("/scratch/trainer-cache/shard-1.bin")),
        "a file of the run (a plugin's or a library's write) "
        "(/scratch/trainer-cache/shard-1.bin)"),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_full_disk_ends_the_run_plainly_and_a_resume_continues(write, tmp_path, monkeypatch,
                                                                 uninterrupted):
    make_full, named = WRITES[write]
    run_dir = tmp_path / "run"
    disk = make_full(FullDisk(monkeypatch))
    with pytest.raises(DiskFullError) as ended:
        _run(run_dir)
    assert disk.hits == 1
    message = str(ended.value)
    assert named.format(run=run_dir) in message, message
    assert "(the disk is full, or a quota or file-size limit was reached)" in message
    assert " free on its disk" in message
    assert message.endswith(f"free space, then continue the run with "
                            f"`spade run --resume {run_dir}`")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["error"] == message
    rows = metrics_rows(run_dir)  # every line whole
    assert [r["iteration"] for r in rows] == list(range(len(rows)))
    disk.free()
    messages = _run(run_dir, resume=True)
    assert any("spade: run completed" in m for m in messages), messages
    iterations, memory = uninterrupted
    assert [r["iteration"] for r in metrics_rows(run_dir)] == iterations
    assert memory_rows(run_dir) == memory


def test_a_full_disk_at_a_resumes_start_up_keeps_the_run(tmp_path, monkeypatch, uninterrupted):
    run_dir = tmp_path / "run"
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, 1), loaded.registry, "t.yaml")
    run(resolved, loaded, report=lambda m: None)
    disk = FullDisk(monkeypatch).fail(artifacts, "append_whole",
                                      lambda path, data: path.name == "isolation.jsonl")
    with pytest.raises(DiskFullError, match=r"could not write 1 line of isolation.jsonl"):
        _run(run_dir, resume=True)
    assert (run_dir / "checkpoints" / "iter-000001").is_dir()  # a resumed run is never removed
    disk.free()
    _run(run_dir, resume=True)
    assert [r["iteration"] for r in metrics_rows(run_dir)] == uninterrupted[0]


def test_the_summary_that_cannot_be_written_does_not_hide_the_error(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    FullDisk(monkeypatch).fail(
        artifacts, "append_whole",
        lambda path, data: path.name == "metrics.jsonl" and b'"iteration": 1,' in data).fail(
        artifacts, "write_atomic", lambda path, data: path.name == "summary.json")
    messages: list[str] = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, ITERATIONS), loaded.registry, "t.yaml")
    with pytest.raises(DiskFullError, match="metrics.jsonl"):
        run(resolved, loaded, report=messages.append)
    [warning] = [m for m in messages if "summary.json not written" in m]
    assert "could not write the run's summary" in warning
    assert f"spade: continue it with: spade run --resume {run_dir}" in messages[-1]


def test_a_full_disk_at_a_fresh_runs_start_up_leaves_nothing(tmp_path, monkeypatch):
    run_dir = tmp_path / "runs" / "first"
    FullDisk(monkeypatch).fail(artifacts, "write_atomic",
                               lambda path, data: path.name == "config.resolved.yaml")
    messages: list[str] = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, ITERATIONS), loaded.registry, "t.yaml")
    with pytest.raises(DiskFullError) as ended:
        run(resolved, loaded, report=messages.append)
    assert str(ended.value).startswith(
        f"could not write the run's resolved config ({run_dir}/config.resolved.yaml)")
    assert str(ended.value).endswith("free space, then run it again")
    assert not (tmp_path / "runs").exists()  # created by this start-up: removed again
    assert "run refused at start-up; nothing of it is kept" in messages[-1]
