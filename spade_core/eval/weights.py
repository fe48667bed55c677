"""Load a run's trained weights (``--checkpoint``) onto the backend's model before evaluating;
a damaged checkpoint is refused first, naming its damaged file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from spade_core.checkpoint_files import enclosing_checkpoint, require_intact
from spade_core.errors import ConfigError, UsageError
from spade_core.interfaces import GenerationBackend, TrainableBackend

_ITER = re.compile(r"iter-(\d+)\Z")


def trainer_folder(path: str | Path) -> Path:
    """The folder holding ``adapter/`` or ``model.safetensors``: given a run directory (its latest
    checkpoint), ``checkpoints/iter-N``, its ``trainer/`` folder, or an adapter folder itself.
    The checkpoint it lies in is checked against its manifest first
    (:func:`~spade_core.checkpoint_files.require_intact`): a damaged one is refused."""
    folder = _find_trainer_folder(path)
    checkpoint = enclosing_checkpoint(folder)
    if checkpoint is not None:
        require_intact(checkpoint, f"--checkpoint {path}")
    return folder


def _find_trainer_folder(path: str | Path) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise UsageError(f"--checkpoint {path}: no such folder")
    candidates = [root, root / "trainer"]
    checkpoints = root / "checkpoints"
    if checkpoints.is_dir():
        iters = sorted((p for p in checkpoints.iterdir() if _ITER.match(p.name)),
                       key=lambda p: int(_ITER.match(p.name).group(1)))
        if iters:
            candidates.append(iters[-1] / "trainer")
    for folder in candidates:
        if (folder / "adapter_model.safetensors").is_file():
            return folder.parent if folder.name == "adapter" else folder
        if (folder / "adapter").is_dir() or (folder / "model.safetensors").is_file():
            return folder
    raise UsageError(f"--checkpoint {path}: no trained weights there; give a run directory, "
                     "RUN_DIR/checkpoints/iter-N or its trainer/ folder (adapter/ or "
                     "model.safetensors)")


def load_checkpoint(backend: GenerationBackend, path: str | Path) -> Path:
    """Merge the LoRA adapter (or load the full weights) of ``path`` into the module the backend
    generates with; returns the folder used."""
    folder = trainer_folder(path)
    if not isinstance(backend, TrainableBackend) or backend.policy().module is None:
        raise ConfigError(f"--checkpoint {path}: the configured backend {type(backend).__name__} "
                          "does not generate with a module in this process; use the "
                          "transformers backend, or merge the adapter and pass --model")
    module: Any = backend.policy().module
    adapter = folder / "adapter"
    if adapter.is_dir():
        try:
            from peft import PeftModel
        except ImportError:
            raise ConfigError("--checkpoint with a LoRA adapter needs peft: "
                              "pip install 'spade-rl[lora]'") from None
        merged = PeftModel.from_pretrained(module, str(adapter)).merge_and_unload()
        if merged is not module:  # the backend keeps its module: copy the merged weights in
            module.load_state_dict(merged.state_dict())
    else:
        from safetensors.torch import load_model

        load_model(module, str(folder / "model.safetensors"), strict=True)
    module.eval()
    return folder
