"""spade_core/eval/weights.py: which folder of a run or checkpoint holds the trainer's weights."""

from __future__ import annotations

import pytest

from spade_core.errors import UsageError
from spade_core.eval.weights import trainer_folder


def test_checkpoint_folder_resolution(tmp_path):
    run = tmp_path / "run"
    for n in (1, 2, 10):
        (run / "checkpoints" / f"iter-{n:06d}" / "trainer" / "adapter").mkdir(parents=True)
    (run / "checkpoints" / "iter-000010" / "trainer" / "adapter" /
     "adapter_model.safetensors").write_bytes(b"")
    latest = run / "checkpoints" / "iter-000010" / "trainer"
    assert trainer_folder(run) == latest
    assert trainer_folder(run / "checkpoints" / "iter-000002") == \
        run / "checkpoints" / "iter-000002" / "trainer"
    assert trainer_folder(latest / "adapter") == latest
    with pytest.raises(UsageError, match="no trained weights"):
        trainer_folder(tmp_path)
