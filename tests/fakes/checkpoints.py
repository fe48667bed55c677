"""A run directory holding checkpoints as the loop writes them (``state.json``, ``rng.json``, a
trainer adapter and ``manifest.json`` with every file's size), small enough to build in a test,
and a way to damage one as a copy cut short would."""

from __future__ import annotations

import json
import random
from pathlib import Path

from spade_core.checkpoint_files import CHECKPOINTS, MANIFEST, RNG_FILE, STATE_FILE, rng_to_json

#: Where the weights lie in a checkpoint, relative to it (a LoRA adapter).
WEIGHTS = "trainer/adapter/adapter_model.safetensors"


def write_checkpoints(run_dir: Path, *iterations: int) -> list[Path]:
    """Checkpoints ``iter-N`` of ``run_dir`` for each ``N``, each whole: a fake adapter (bytes
    that are no real weights: nothing loads them), state, generators and manifest."""
    folders = []
    for n in iterations:
        folder = Path(run_dir) / CHECKPOINTS / f"iter-{n:06d}"
        (folder / WEIGHTS).parent.mkdir(parents=True)
        (folder / WEIGHTS).write_bytes(b"w" * 1000)
        (folder / "trainer" / "adapter" / "adapter_config.json").write_text("{}")
        (folder / RNG_FILE).write_text(json.dumps(rng_to_json({"python": random.getstate()})))
        (folder / STATE_FILE).write_text(json.dumps({"next_iteration": n, "trainer": True}))
        sizes = {str(p.relative_to(folder)): p.stat().st_size
                 for p in sorted(folder.rglob("*")) if p.is_file()}
        (folder / MANIFEST).write_text(json.dumps({"files": sizes}))
        folders.append(folder)
    return folders


def cut_short(path: Path, keep: int = 10) -> None:
    """Keep only the first ``keep`` bytes of ``path``, as an interrupted copy leaves it."""
    path.write_bytes(path.read_bytes()[:keep])
