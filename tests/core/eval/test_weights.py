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


def test_a_damaged_checkpoint_is_refused_naming_its_file_and_an_intact_one(tmp_path):
    from spade_core.checkpoint_files import CheckpointError

    from fakes.checkpoints import WEIGHTS, cut_short, write_checkpoints

    run = tmp_path / "run"
    first, latest = write_checkpoints(run, 1, 2)
    assert trainer_folder(run) == latest / "trainer"  # whole: accepted
    cut_short(latest / WEIGHTS)
    for given in (run, latest, latest / "trainer", latest / "trainer" / "adapter"):
        with pytest.raises(CheckpointError) as refused:
            trainer_folder(given)
        assert str(refused.value) == (
            f"--checkpoint {given}: checkpoint {latest} is damaged ({WEIGHTS} has 10 bytes, "
            f"1000 when written); the newest intact checkpoint of the run is {first}; give it "
            "instead")
    assert trainer_folder(first) == first / "trainer"
    cut_short(first / "state.json", 3)
    with pytest.raises(CheckpointError, match="unreadable state.json .*the run has no intact"):
        trainer_folder(first)


def test_a_folder_in_no_checkpoint_has_nothing_to_be_checked_against(tmp_path):
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_model.safetensors").write_bytes(b"w")
    assert trainer_folder(adapter) == tmp_path
