"""Checkpoints of a run, written atomically under ``RUN_DIR/checkpoints/``, and exact resume.

A checkpoint ``iter-NNNNNN`` holds everything needed to continue at iteration ``NNNNNN``: the
trainer's weights or adapter and optimizer (``trainer/``, absent before the first update), a
snapshot of the environment memory (``memory/``), the random number generators (``rng.pkl``) and
``state.json`` (next iteration, corpus sampler and pool positions, running totals). It is built in
a hidden temporary folder and renamed into place, so a ``kill -9`` at any moment leaves either the
whole checkpoint or none of it.

The memory is snapshotted through the memory's own ``save_checkpoint(dir)`` /
``load_checkpoint(dir)`` when it has them; otherwise, for memories that keep their state in a
``folder`` (the built-in ``faiss`` memory), the folder's files are copied (SQLite databases through
SQLite's online backup, so the copy is consistent while the memory stays open) and copied back
before the memory is opened on resume.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

from spade_core.atomic_files import fsync_dir, write_atomic
from spade_core.errors import SpadeError

CHECKPOINTS = "checkpoints"
PREFIX = "iter-"
#: Files a memory folder holds that are process state, not data (locks, SQLite side files).
_SKIP_SUFFIXES = (".lock", "-wal", "-shm", "-journal")


class CheckpointError(SpadeError):
    """A checkpoint is missing, incomplete or does not fit the run being resumed."""


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_file():
            with path.open("rb") as fh:
                os.fsync(fh.fileno())
        elif path.is_dir():
            fsync_dir(path)
    fsync_dir(folder)


def checkpoints(run_dir: Path) -> list[Path]:
    """Complete checkpoints of a run, oldest first."""
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX)
             and (p / "state.json").is_file()]
    return sorted(found, key=lambda p: int(p.name.removeprefix(PREFIX)))


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = checkpoints(run_dir)
    return found[-1] if found else None


# -- random number generators ----------------------------------------------------------------------


def rng_state() -> dict[str, Any]:
    """Python's, NumPy's and (when loaded) torch's global generator states."""
    state: dict[str, Any] = {"python": random.getstate()}
    if "numpy" in sys.modules:
        import numpy as np

        state["numpy"] = np.random.get_state()
    if "torch" in sys.modules:
        import torch

        state["torch"] = torch.get_rng_state()
        if torch.cuda.is_available():
            state["torch_cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    if "numpy" in state:
        import numpy as np

        np.random.set_state(state["numpy"])
    if "torch" in state:
        import torch

        torch.set_rng_state(state["torch"])
        if "torch_cuda" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["torch_cuda"])


# -- memory snapshots ------------------------------------------------------------------------------


def _copy_sqlite(source: Path, target: Path) -> None:
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def snapshot_memory(memory: Any, target: Path) -> dict[str, Any] | None:
    """Copy the memory's state into ``target``; returns how it was done (for ``state.json``), or
    ``None`` when the memory offers no way (then resume keeps whatever the memory holds)."""
    save = getattr(memory, "save_checkpoint", None)
    if callable(save):
        target.mkdir(parents=True)
        save(target)
        return {"kind": "method"}
    folder = getattr(memory, "folder", None)
    if folder is None or not Path(folder).is_dir():
        return None
    folder = Path(folder)
    flush = getattr(memory, "save_index", None)
    if callable(flush):
        flush()  # the built-in memory's index cache, so resume need not rebuild it
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_dir() or path.name.endswith(_SKIP_SUFFIXES):
            continue
        out = target / relative
        out.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in (".sqlite", ".db", ".sqlite3"):
            _copy_sqlite(path, out)
        else:
            shutil.copy2(path, out)
    target.mkdir(parents=True, exist_ok=True)
    return {"kind": "folder", "folder": str(folder.resolve())}


def restore_memory_folder(checkpoint: Path, info: dict[str, Any] | None) -> None:
    """Before the memory is opened on resume: make its folder hold exactly the snapshot."""
    if not info or info.get("kind") != "folder":
        return
    folder = Path(info["folder"])
    snapshot = checkpoint / "memory"
    if folder.exists():
        for path in folder.iterdir():
            if path.name.endswith(".lock"):
                continue
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(snapshot, folder, dirs_exist_ok=True)


def restore_memory_method(memory: Any, checkpoint: Path, info: dict[str, Any] | None) -> None:
    """After the memory is built on resume: hand it its snapshot when it made one itself."""
    if info and info.get("kind") == "method":
        memory.load_checkpoint(checkpoint / "memory")


# -- whole checkpoints -----------------------------------------------------------------------------


def save_checkpoint(run_dir: Path, next_iteration: int, state: dict[str, Any], trainer: Any,
                    memory: Any, keep: int) -> Path:
    """Write checkpoint ``iter-<next_iteration>`` atomically, then keep only the newest ``keep``."""
    root = Path(run_dir) / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{PREFIX}{next_iteration:06d}"
    tmp = root / f".tmp-{PREFIX}{next_iteration:06d}-{os.getpid()}"
    for stale in root.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir()
    state = dict(state, next_iteration=next_iteration)
    state["trainer"] = False
    save = getattr(trainer, "save", None)
    if next_iteration > 0 and callable(save):  # before any update the config's model is the state
        save(tmp / "trainer")
        state["trainer"] = (tmp / "trainer").is_dir()
    state["memory"] = snapshot_memory(memory, tmp / "memory")
    with (tmp / "rng.pkl").open("wb") as fh:
        pickle.dump(rng_state(), fh)
    (tmp / "state.json").write_text(json.dumps(state, indent=1, default=str))
    _fsync_tree(tmp)
    if final.exists():  # a checkpoint of the same iteration from a run that was resumed earlier
        shutil.rmtree(final)
    os.rename(tmp, final)
    fsync_dir(root)
    for old in checkpoints(run_dir)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def read_state(checkpoint: Path) -> dict[str, Any]:
    try:
        return json.loads((checkpoint / "state.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{checkpoint}: unreadable state.json ({exc})") from None


def load_rng(checkpoint: Path) -> None:
    with (checkpoint / "rng.pkl").open("rb") as fh:
        restore_rng(pickle.load(fh))  # noqa: S301 - our own file, written by save_checkpoint


def truncate_jsonl(path: Path, keep_below: int, key: str = "iteration") -> int:
    """Drop rows whose ``key`` is at least ``keep_below`` (and any torn last line) from a JSONL
    file, atomically; returns how many rows were dropped."""
    if not path.exists():
        return 0
    kept, dropped = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            dropped += 1
            continue
        if isinstance(row, dict) and isinstance(row.get(key), int) and row[key] >= keep_below:
            dropped += 1
            continue
        kept.append(line)
    if dropped:

        write_atomic(path, "".join(line + "\n" for line in kept))
    return dropped
