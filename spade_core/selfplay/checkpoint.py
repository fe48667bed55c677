"""Checkpoints of a run, written atomically under ``RUN_DIR/checkpoints/``, and exact resume.

A checkpoint ``iter-NNNNNN`` holds everything needed to continue at iteration ``NNNNNN``: the
trainer's weights or adapter and optimizer (``trainer/``, absent before the first update), a
snapshot of the environment memory (``memory/``), the random number generators (``rng.pkl``) and
``state.json`` (next iteration, corpus sampler and pool positions, running totals). It is built in
a hidden temporary folder and renamed into place, so a ``kill -9`` at any moment leaves either the
whole checkpoint or none of it.

The memory is snapshotted only through its interface: ``memory.save_checkpoint(CHECKPOINT/memory)``
while it is open, and on resume, once the memory is built from the run's config,
``memory.restore_checkpoint(CHECKPOINT/memory)``, which leaves it holding exactly the snapshot.
What the folder holds is the memory's business (``docs/memory.md``). ``state.json``'s ``memory``
entry says how the snapshot was taken: ``{"kind": "checkpoint"}``; ``null`` (a memory that could
not be snapshotted) leaves the memory as it is on resume.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import sys
from pathlib import Path
from typing import Any

from spade_core.atomic_files import fsync_dir, write_atomic
from spade_core.errors import SpadeError
from spade_core.interfaces.memory import EnvMemory

CHECKPOINTS = "checkpoints"
PREFIX = "iter-"
#: Sub-folder of a checkpoint that holds the memory's snapshot.
MEMORY_DIR = "memory"
#: The ``state.json`` ``memory`` kind that names a snapshot in ``MEMORY_DIR``.
_MEMORY_KIND = "checkpoint"


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


def snapshot_memory(memory: EnvMemory, target: Path) -> dict[str, Any]:
    """Have the memory write its snapshot into ``target``; returns the ``state.json`` entry."""
    target.mkdir(parents=True, exist_ok=True)
    memory.save_checkpoint(target)
    return {"kind": _MEMORY_KIND}


def restore_memory(memory: EnvMemory, checkpoint: Path, info: dict[str, Any] | None) -> None:
    """On resume, after the memory is built: make it hold exactly the checkpoint's snapshot
    (``info`` is ``state.json``'s ``memory`` entry; ``None`` leaves the memory as it is)."""
    if not info:
        return
    if info.get("kind") != _MEMORY_KIND:
        raise CheckpointError(f"{checkpoint}: unknown memory snapshot kind {info.get('kind')!r} "
                              "in state.json (written by a newer spade-rl?)")
    snapshot = checkpoint / MEMORY_DIR
    if not snapshot.is_dir():
        raise CheckpointError(f"{checkpoint}: the memory snapshot {MEMORY_DIR}/ is missing")
    memory.restore_checkpoint(snapshot)


# -- whole checkpoints -----------------------------------------------------------------------------


def save_checkpoint(run_dir: Path, next_iteration: int, state: dict[str, Any], trainer: Any,
                    memory: EnvMemory, keep: int) -> Path:
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
    if next_iteration > 0:  # before any update the config's model is the state
        trainer.save(tmp / "trainer")
        state["trainer"] = (tmp / "trainer").is_dir()
    state["memory"] = snapshot_memory(memory, tmp / MEMORY_DIR)
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
