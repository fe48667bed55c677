"""A checkpoint folder as it lies on disk, for every layer that reads one: the folder names, the
generator states as plain JSON, and the check that a checkpoint is whole
(:func:`verify_checkpoint`), which a resume, ``spade eval --checkpoint`` and ``spade
export-model`` run before they trust one.
Writing checkpoints is the loop's business (:mod:`spade_core.selfplay.checkpoint`)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from spade_core.errors import SpadeError

CHECKPOINTS = "checkpoints"
PREFIX = "iter-"
#: The generators' states, as JSON (:func:`rng_to_json`).
RNG_FILE = "rng.json"
#: Written last into a checkpoint: ``{"files": {relative path: size in bytes}}``.
MANIFEST = "manifest.json"
#: The checkpoint's positions and totals; a folder without it is no (complete) checkpoint.
STATE_FILE = "state.json"


class CheckpointError(SpadeError):
    """A checkpoint is missing, incomplete or does not fit the run being resumed."""


def checkpoints(run_dir: Path) -> list[Path]:
    """Complete checkpoints of a run, oldest first."""
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX)
             and (p / STATE_FILE).is_file()]
    return sorted(found, key=lambda p: int(p.name.removeprefix(PREFIX)))


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = checkpoints(run_dir)
    return found[-1] if found else None


def _bytes64(tensor: Any) -> str:
    return base64.b64encode(bytes(tensor.cpu().numpy().tobytes())).decode("ascii")


def rng_to_json(state: dict[str, Any]) -> dict[str, Any]:
    """The generators' states (:func:`spade_core.selfplay.checkpoint.rng_state`) as plain JSON
    values: lists of integers for Python's and NumPy's Mersenne twisters, base64 of torch's
    state bytes."""
    version, internal, gauss = state["python"]
    out: dict[str, Any] = {"format": 1, "python": [version, list(internal), gauss]}
    if "numpy" in state:
        name, keys, pos, has_gauss, cached = state["numpy"]
        out["numpy"] = [str(name), [int(k) for k in keys], int(pos), int(has_gauss),
                        float(cached)]
    if "torch" in state:
        out["torch"] = _bytes64(state["torch"])
    if "torch_cuda" in state:
        out["torch_cuda"] = [_bytes64(t) for t in state["torch_cuda"]]
    return out


def rng_from_json(data: dict[str, Any]) -> dict[str, Any]:
    """:func:`rng_to_json`'s inverse (for :func:`spade_core.selfplay.checkpoint.restore_rng`); a
    malformed file raises ``ValueError``."""
    try:
        version, internal, gauss = data["python"]
        state: dict[str, Any] = {"python": (int(version), tuple(int(i) for i in internal),
                                            None if gauss is None else float(gauss))}
        if "numpy" in data:
            import numpy as np

            name, keys, pos, has_gauss, cached = data["numpy"]
            state["numpy"] = (str(name), np.asarray(keys, dtype=np.uint32), int(pos),
                              int(has_gauss), float(cached))
        for key in ("torch", "torch_cuda"):
            if key in data:
                import torch

                def tensor(text: str) -> Any:
                    raw = bytearray(base64.b64decode(text.encode("ascii"), validate=True))
                    return torch.frombuffer(raw, dtype=torch.uint8).clone()

                state[key] = (tensor(data[key]) if key == "torch"
                              else [tensor(t) for t in data[key]])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed generator state: {exc}") from None
    return state


def read_state(checkpoint: Path) -> dict[str, Any]:
    try:
        return json.loads((checkpoint / STATE_FILE).read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{checkpoint}: unreadable state.json ({exc})") from None


def verify_checkpoint(checkpoint: Path) -> str | None:
    """What is wrong with a checkpoint on disk, or ``None`` when it looks whole: ``state.json``
    and ``rng.json`` parse, and every file ``manifest.json`` lists has the size it had when
    written (checkpoints written before the manifest are checked for ``state.json`` only)."""
    try:
        read_state(checkpoint)
    except CheckpointError as exc:
        return str(exc).removeprefix(f"{checkpoint}: ")
    manifest = checkpoint / MANIFEST
    if not manifest.is_file():
        return None
    try:
        files = json.loads(manifest.read_text())["files"]
        for name, size in files.items():
            path = checkpoint / name
            if not path.is_file():
                return f"{name} is missing"
            if path.stat().st_size != int(size):
                return f"{name} has {path.stat().st_size} bytes, {int(size)} when written"
        rng_from_json(json.loads((checkpoint / RNG_FILE).read_text()))
    except (OSError, KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"unreadable {MANIFEST} or {RNG_FILE} ({exc})"
    return None


def resumable_checkpoint(run_dir: Path) -> tuple[Path | None, list[tuple[Path, str]]]:
    """The newest checkpoint that :func:`verify_checkpoint` accepts, and the newer ones it
    skipped, each with what is wrong with it."""
    skipped = []
    for candidate in reversed(checkpoints(run_dir)):
        problem = verify_checkpoint(candidate)
        if problem is None:
            return candidate, skipped
        skipped.append((candidate, problem))
    return None, skipped


def enclosing_checkpoint(folder: Path) -> Path | None:
    """The checkpoint ``folder`` is or lies in (``iter-N``, its ``trainer/`` or
    ``trainer/adapter/``); ``None`` for a folder in no checkpoint (a bare adapter folder has
    nothing to be checked against)."""
    folder = Path(folder)
    for candidate in (folder, folder.parent, folder.parent.parent):
        if (candidate / STATE_FILE).is_file() or (candidate / MANIFEST).is_file():
            return candidate
    return None


def require_intact(checkpoint: Path, label: str) -> None:
    """Refuse a damaged checkpoint with a :class:`CheckpointError` that starts with ``label``
    (what the user gave), names the damaged file and points at the run's newest intact
    checkpoint, if any."""
    problem = verify_checkpoint(checkpoint)
    if problem is None:
        return
    intact, _ = resumable_checkpoint(checkpoint.parent.parent)
    instead = (f"the newest intact checkpoint of the run is {intact}; give it instead"
               if intact is not None else "the run has no intact checkpoint")
    raise CheckpointError(f"{label}: checkpoint {checkpoint} is damaged ({problem}); {instead}")
