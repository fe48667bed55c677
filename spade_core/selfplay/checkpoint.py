"""Checkpoints of a run, written atomically under ``RUN_DIR/checkpoints/``, and exact resume.

A checkpoint ``iter-NNNNNN`` holds everything needed to continue at iteration ``NNNNNN``: the
trainer's weights or adapter and optimizer (``trainer/``, absent before the first update), a
snapshot of the environment memory (``memory/``), the random number generators (``rng.json``,
plain JSON: a resume never unpickles anything from the run directory) and ``state.json`` (next
iteration, corpus sampler and pool positions, running totals), and last ``manifest.json``, the size
of every other file. It is built in a hidden temporary folder and renamed into place, so a ``kill
-9`` at any moment leaves either the whole checkpoint or none of it; a write that fails removes the
temporary folder and raises :class:`CheckpointError` (the disk full:
:class:`~spade_core.disk_space.DiskFullError`), the earlier checkpoints untouched. A checkpoint
damaged afterwards (a file cut short by a copy or a failing disk) fails
:func:`~spade_core.checkpoint_files.verify_checkpoint`; a resume then falls back to the newest
intact one (:func:`~spade_core.checkpoint_files.resumable_checkpoint`).

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
import random
import shutil
import sys
from pathlib import Path
from typing import Any

from spade_core.atomic_files import fsync_dir, write_atomic
from spade_core.checkpoint_files import (
    CHECKPOINTS,
    MANIFEST,
    PREFIX,
    RNG_FILE,
    STATE_FILE,
    CheckpointError,
    checkpoints,
    rng_from_json,
    rng_to_json,
)
from spade_core.disk_space import DiskFullError, full_reason, is_disk_full, writing
from spade_core.interfaces.memory import EnvMemory

#: Sub-folder of a checkpoint that holds the memory's snapshot.
MEMORY_DIR = "memory"
#: The ``state.json`` ``memory`` kind that names a snapshot in ``MEMORY_DIR``.
_MEMORY_KIND = "checkpoint"
#: What checkpoints written before ``rng.json`` hold instead: a pickle, never loaded.
LEGACY_RNG_FILE = "rng.pkl"
#: Prefix a damaged checkpoint is renamed to on resume (kept for inspection, never pruned).
DAMAGED_PREFIX = "damaged-"


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_file():
            with path.open("rb") as fh:
                os.fsync(fh.fileno())
        elif path.is_dir():
            fsync_dir(path)
    fsync_dir(folder)


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
    """Write checkpoint ``iter-<next_iteration>`` atomically, then keep only the newest ``keep``.
    A write that fails (the trainer's or the memory's own error; the disk full, a quota or a
    file-size limit) leaves no trace of this checkpoint and raises :class:`CheckpointError`
    (:class:`~spade_core.disk_space.DiskFullError`, with the free space and the size of the
    previous checkpoint) saying what failed and that the earlier checkpoints are intact."""
    root = Path(run_dir) / CHECKPOINTS
    final = root / f"{PREFIX}{next_iteration:06d}"
    tmp = root / f".tmp-{PREFIX}{next_iteration:06d}-{os.getpid()}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        for stale in root.glob(".tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp.mkdir()
        _write_into(tmp, next_iteration, state, trainer, memory)
    except Exception as exc:  # noqa: BLE001 - the trainer's or the memory's write failed too
        shutil.rmtree(tmp, ignore_errors=True)
        earlier = [p for p in checkpoints(run_dir) if p.name != final.name]
        kept = "nothing of it was kept and " + (
            f"the earlier checkpoint {earlier[-1].name} is intact" if earlier
            else "no earlier checkpoint exists")
        if is_disk_full(exc):  # e.g. SQLite's "database or disk is full" from the memory
            raise DiskFullError(
                final, f"checkpoint {final.name}", reason=full_reason(exc), kept=kept,
                needed=_size(earlier[-1]) if earlier else None) from exc
        what = f"{type(exc).__name__}: {exc}"
        raise CheckpointError(
            f"could not write checkpoint {final.name} in {root}: {what}; {kept}; fix it, then "
            f"continue the run with `spade run --resume {run_dir}`") from exc
    if final.exists():  # a checkpoint of the same iteration from a run that was resumed earlier
        shutil.rmtree(final)
    os.rename(tmp, final)
    fsync_dir(root)
    for old in checkpoints(run_dir)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _size(folder: Path) -> int:
    """The bytes of every file under ``folder``: about what the next checkpoint needs."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _write_into(tmp: Path, next_iteration: int, state: dict[str, Any], trainer: Any,
                memory: EnvMemory) -> None:
    state = dict(state, next_iteration=next_iteration)
    state["trainer"] = False
    if next_iteration > 0:  # before any update the config's model is the state
        trainer.save(tmp / "trainer")
        state["trainer"] = (tmp / "trainer").is_dir()
    state["memory"] = snapshot_memory(memory, tmp / MEMORY_DIR)
    _write_file(tmp / RNG_FILE, json.dumps(rng_to_json(rng_state())))
    _write_file(tmp / STATE_FILE, json.dumps(state, indent=1, default=str))
    sizes = {str(p.relative_to(tmp)): p.stat().st_size
             for p in sorted(tmp.rglob("*")) if p.is_file()}
    _write_file(tmp / MANIFEST, json.dumps({"files": sizes}, indent=1))
    _fsync_tree(tmp)


def _write_file(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()


def set_aside(checkpoint: Path) -> Path:
    """Rename a damaged checkpoint ``damaged-iter-NNNNNN`` (a suffix when taken) so that the
    resumed run neither reads it nor overwrites it; returns the new path."""
    target = checkpoint.with_name(DAMAGED_PREFIX + checkpoint.name)
    n = 1
    while target.exists():
        n += 1
        target = checkpoint.with_name(f"{DAMAGED_PREFIX}{checkpoint.name}.{n}")
    os.rename(checkpoint, target)
    return target


def load_rng(checkpoint: Path) -> str | None:
    """Restore the generators from ``rng.json``. A checkpoint written before it holds
    ``rng.pkl``, a pickle, which is never loaded (unpickling a file of the run directory could run
    code): the generators then keep their seeded state, and the returned note says so."""
    path = checkpoint / RNG_FILE
    if path.is_file():
        try:
            restore_rng(rng_from_json(json.loads(path.read_text())))
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{path}: unreadable generator state ({exc})") from None
        return None
    if (checkpoint / LEGACY_RNG_FILE).is_file():
        return (f"{checkpoint / LEGACY_RNG_FILE} (written by an older spade-rl) is a pickle and "
                "is not loaded: the random generators continue from their seeded state, so the "
                "resumed run is not bit-identical to an uninterrupted one")
    raise CheckpointError(f"{checkpoint}: {RNG_FILE} is missing")


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
        data = "".join(line + "\n" for line in kept).encode("utf-8")
        with writing(path, f"{path.name} without the rows of the iterations run again",
                     len(data)):
            write_atomic(path, data)
    return dropped
