"""Checkpoints, exact resume after SIGKILL, and the three run modes, on the fake self-play
components with the real ``faiss`` memory (hashing embedder)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spade_core.config.load import resolve_config
from spade_core.errors import ConfigError
from spade_core.checkpoint_files import checkpoints, latest_checkpoint, read_state
from spade_core.selfplay.run_loop import run

from fakes.cli import ROOT
from fakes.training import (
    load_training_plugins,
    memory_rows,
    metrics_rows,
    run_in_process,
    training_config,
)


metrics = metrics_rows


def test_checkpoint_holds_trainer_memory_rng_and_positions(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 3, checkpoint={"every": 2, "keep": 5})
    names = [p.name for p in checkpoints(run_dir)]
    assert names == ["iter-000000", "iter-000002", "iter-000003"]  # start, every 2, last
    last = latest_checkpoint(run_dir)
    state = read_state(last)
    assert state["next_iteration"] == 3 and state["trainer"] is True
    assert state["corpus"] == {"position": 6}  # 3 iterations x 2 documents
    assert json.loads((last / "trainer" / "updates.json").read_text()) == {"updates": 3}
    assert (last / "memory" / "memory.sqlite").is_file() and (last / "rng.json").is_file()
    assert state["memory"] == {"kind": "checkpoint"}
    # The index too: resume need not rebuild it.
    assert (last / "memory" / "dedupe_index.json").is_file()
    assert not read_state(checkpoints(run_dir)[0])["trainer"]  # nothing to save before updates
    assert not list((run_dir / "checkpoints").glob(".tmp-*"))


def test_keep_prunes_old_checkpoints(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 4, checkpoint={"every": 1, "keep": 2})
    assert [p.name for p in checkpoints(run_dir)] == ["iter-000003", "iter-000004"]


def test_resume_continues_and_extends_iterations(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 2)
    run_in_process(run_dir, 4, resume=True)
    assert [r["iteration"] for r in metrics(run_dir)] == [0, 1, 2, 3]
    assert [r["train"]["updates"] for r in metrics(run_dir)] == [1, 2, 3, 4]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 4
    assert summary["resumed_from"] == 2


def test_resume_needs_a_checkpoint_and_a_run(tmp_path):
    with pytest.raises(ConfigError, match="not a run directory"):
        run_in_process(tmp_path / "nothing", 2, resume=True)
    run_dir = run_in_process(tmp_path / "run", 1, checkpoint={"every": 0})
    with pytest.raises(ConfigError, match="no checkpoint"):
        run_in_process(run_dir, 2, resume=True, checkpoint={"every": 0})


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _kill_child(run_dir: Path, iterations: int, resume: bool,
                rng: random.Random | None, schedule: str) -> int | None:
    """Start the child run; SIGKILL it at a random moment once it has started iterating (or, one
    time in five, at a random moment during start-up); None when it was killed. Without ``rng``
    the child runs to its end."""
    script = ROOT / "tests" / "fakes" / "training.py"
    args = [sys.executable, str(script), str(run_dir), str(iterations),
            schedule]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    marker = run_dir / "isolation.jsonl"  # one line each time a (resumed) run starts iterating
    before = _lines(marker)
    child = subprocess.Popen(args + (["--resume"] if resume else []), env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if rng is None:
            return child.wait(timeout=120)
        if rng.random() < 0.2:
            return child.wait(timeout=rng.uniform(0.0, 2.0))
        deadline = time.time() + 60
        while _lines(marker) == before and child.poll() is None and time.time() < deadline:
            time.sleep(0.01)
        return child.wait(timeout=rng.uniform(0.0, 1.0))
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        return None


@pytest.mark.slow
@pytest.mark.parametrize("schedule", ["frontier", "window"])
def test_sigkill_at_random_points_then_resume_loses_and_duplicates_nothing(tmp_path, schedule):
    # An iteration takes about 0.25 s in the child, a kill comes within 1 s of the (re)start:
    # fewer than three kills cannot get through 14 iterations.
    iterations = 14
    reference = run_in_process(tmp_path / "reference", iterations, schedule=schedule)
    run_dir = tmp_path / "killed"
    rng = random.Random(int(os.environ.get("SPADE_KILL_SEED", "7")))
    kills, resumes, deadline = 0, 0, time.time() + 180
    while time.time() < deadline:
        started = latest_checkpoint(run_dir) is not None
        if run_dir.exists() and not started:  # killed before its first checkpoint: start over
            import shutil

            shutil.rmtree(run_dir)
        if kills >= 6:  # enough: let it finish
            code = _kill_child(run_dir, iterations, started, None, schedule)
        else:
            code = _kill_child(run_dir, iterations, started, rng, schedule)
        resumes += int(started)
        if code is None:
            kills += 1
            continue
        assert code == 0
        break
    assert kills >= 3 and resumes >= 1
    rows = metrics(run_dir)
    assert [r["iteration"] for r in rows] == list(range(iterations))  # no gap, no duplicate
    assert [r["train"]["updates"] for r in rows] == list(range(1, iterations + 1))
    assert memory_rows(run_dir) == memory_rows(reference)  # no env lost or duplicated
    # Replays continue exactly: the same environments replayed in the same iterations.
    assert sum(r["envs_replayed"] for r in rows) > 0
    assert [r["envs_replayed"] for r in rows] == [r["envs_replayed"] for r in metrics(reference)]
    replayed = [(e["iteration"], e["id"]) for e in map(json.loads, (
        run_dir / "replays.jsonl").read_text().splitlines())]
    expected = [(e["iteration"], e["id"]) for e in map(json.loads, (
        reference / "replays.jsonl").read_text().splitlines())]
    assert replayed == expected  # no replay row lost or written twice
    assert [r["corpus_state"] for r in rows] == [r["corpus_state"] for r in metrics(reference)]
    state = read_state(latest_checkpoint(run_dir))
    assert state["next_iteration"] == iterations
    trained = json.loads((latest_checkpoint(run_dir) / "trainer" / "samples.json").read_text())
    assert trained == \
        json.loads((latest_checkpoint(reference) / "trainer" / "samples.json").read_text())
    if schedule == "window":  # windows of 4 iterations: designs held across kills are
        # released at the next window's start (updates 5, 9, 13) with their recorded log-probs
        # and the same reward as in the uninterrupted run
        assert {d[0] for d in trained["designs"]} == {5, 9, 13}
        assert all(d[3] is not None for d in trained["designs"])
        assert [r["window"] for r in rows] == [r["window"] for r in metrics(reference)]


# -- faults: resume state without pickle, a damaged checkpoint, a full disk ---------------------


def test_generator_states_are_json_and_restore_exactly(tmp_path):
    import numpy as np

    from spade_core.checkpoint_files import rng_from_json, rng_to_json
    from spade_core.selfplay.checkpoint import restore_rng, rng_state

    random.random(), np.random.random()
    text = json.dumps(rng_to_json(rng_state()))
    expected = (random.random(), float(np.random.random()))
    random.seed(99), np.random.seed(99)
    restore_rng(rng_from_json(json.loads(text)))
    assert (random.random(), float(np.random.random())) == expected
    with pytest.raises(ValueError, match="malformed generator state"):
        rng_from_json({"python": [3, "not a list", None]})


def test_a_legacy_pickle_is_never_loaded_and_the_resume_says_so(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 2)
    last = latest_checkpoint(run_dir)
    (last / "rng.json").unlink()
    (last / "manifest.json").unlink()  # as a checkpoint written before both
    marker = tmp_path / "unpickled"
    # A pickle that would create a file if it were ever loaded.
    (last / "rng.pkl").write_bytes(
        b"cos\nsystem\n(V" + f"touch {marker}".encode() + b"\ntR.")
    messages = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, 3), loaded.registry, "t.yaml")
    run(resolved, loaded, report=messages.append, resume=run_dir)
    assert not marker.exists()
    assert any("rng.pkl" in m and "not loaded" in m for m in messages), messages
    assert [r["iteration"] for r in metrics(run_dir)] == [0, 1, 2]


def test_a_truncated_latest_checkpoint_falls_back_to_the_previous_one(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 3, checkpoint={"every": 1, "keep": 3})
    assert [p.name for p in checkpoints(run_dir)][-2:] == ["iter-000002", "iter-000003"]
    cut = latest_checkpoint(run_dir) / "trainer" / "samples.json"
    cut.write_bytes(cut.read_bytes()[:10])  # cut short after it was written
    messages = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, 4, checkpoint={"every": 1, "keep": 3}),
                              loaded.registry, "t.yaml")
    run(resolved, loaded, report=messages.append, resume=run_dir)
    [warning] = [m for m in messages if "damaged" in m]
    assert "checkpoint iter-000003 is damaged (trainer/samples.json has 10 bytes" in warning
    assert "resuming from the previous one, iter-000002" in warning
    assert "resuming at iteration 2 from iter-000002" in "\n".join(messages)
    kept = run_dir / "checkpoints" / "damaged-iter-000003"
    assert (kept / "trainer" / "samples.json").read_bytes() == cut.read_bytes() or kept.is_dir()
    rows = metrics(run_dir)
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3]
    assert [r["train"]["updates"] for r in rows] == [1, 2, 3, 4]
    assert read_state(latest_checkpoint(run_dir))["next_iteration"] == 4


def test_a_damaged_only_checkpoint_is_refused_with_a_clear_error(tmp_path):
    from spade_core.checkpoint_files import CheckpointError

    run_dir = run_in_process(tmp_path / "run", 1, checkpoint={"every": 1, "keep": 1})
    (latest_checkpoint(run_dir) / "state.json").write_text('{"next_iter')
    with pytest.raises(CheckpointError, match="no intact checkpoint is left"):
        run_in_process(run_dir, 2, resume=True, checkpoint={"every": 1, "keep": 1})
    assert (run_dir / "checkpoints" / "damaged-iter-000001" / "state.json").is_file()


def test_a_full_disk_while_a_checkpoint_is_written_loses_nothing_and_resumes(tmp_path):
    # The child's file-size limit lets the trainer's stand-in weights of two updates through
    # (2 x 3 MB, 7 MB allowed) but not of three: the third checkpoint fails while it is written.
    run_dir = tmp_path / "run"
    script = ROOT / "tests" / "fakes" / "training.py"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    child = subprocess.run(
        [sys.executable, str(script), str(run_dir), "5", "frontier", "--delay=0",
         "--weights-bytes=3000000", "--file-limit=7000000", "--report"],
        env=env, capture_output=True, text=True, timeout=120)
    assert child.returncode == 1, child.stderr
    assert "could not write checkpoint iter-000003" in child.stderr
    assert "File too large" in child.stderr and "the earlier checkpoint iter-000002 is intact" \
        in child.stderr
    assert f"spade: continue it with: spade run --resume {run_dir}" in child.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed" and "iter-000003" in summary["error"]
    assert [p.name for p in checkpoints(run_dir)] == ["iter-000001", "iter-000002"]
    assert not list((run_dir / "checkpoints").glob(".tmp-*"))  # no half-written checkpoint
    assert [r["iteration"] for r in metrics(run_dir)] == [0, 1, 2]  # iteration 2's row kept
    run_in_process(run_dir, 5, resume=True)  # space freed: the run continues
    rows = metrics(run_dir)
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["train"]["updates"] for r in rows] == [1, 2, 3, 4, 5]


def test_a_second_run_on_a_memory_in_use_is_refused_naming_the_holder(tmp_path):
    from envmemory.store import RecordStore

    shared = tmp_path / "shared-memory"
    memory = {"plugin": "faiss", "options": {"embedder": "hashing", "path": str(shared),
                                             "mastery_rollouts": 3, "too_hard_rollouts": 3}}
    first = run_in_process(tmp_path / "first", 1, memory=memory)
    assert not (first / "memory").exists()  # the first run's memory is the shared one
    holder = RecordStore(shared)  # the first run, still writing its memory
    try:
        with pytest.raises(ConfigError) as refused:
            run_in_process(tmp_path / "second", 1, memory=memory)
        message = str(refused.value)
        assert f"{shared} is already open for writing by another process (pid {os.getpid()}" \
            in message
        assert "memory.options.path" in message and "one memory has one writer" in message
        assert not (tmp_path / "second").exists()  # refused at start-up: nothing left behind
        assert len(list(holder.records())) > 0  # the holder's records untouched
    finally:
        holder.close()
    run_in_process(tmp_path / "first", 2, resume=True, memory=memory)  # it continues
    assert [r["iteration"] for r in metrics(tmp_path / "first")] == [0, 1]
