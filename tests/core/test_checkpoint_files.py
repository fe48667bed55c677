"""spade_core/checkpoint_files.py: a checkpoint is whole when its files have the sizes its
manifest wrote down; a damaged one is named with the file at fault, wherever it is given from."""

from __future__ import annotations

import pytest

from spade_core.checkpoint_files import (
    CheckpointError,
    enclosing_checkpoint,
    require_intact,
    resumable_checkpoint,
    verify_checkpoint,
)

from fakes.checkpoints import WEIGHTS, cut_short, write_checkpoints


def test_a_whole_checkpoint_passes_and_a_damaged_one_names_its_file(tmp_path):
    first, second, third = write_checkpoints(tmp_path / "run", 1, 2, 3)
    assert verify_checkpoint(third) is None
    cut_short(third / WEIGHTS)
    (second / "rng.json").unlink()
    assert verify_checkpoint(third) == f"{WEIGHTS} has 10 bytes, 1000 when written"
    assert verify_checkpoint(second) == "rng.json is missing"
    assert resumable_checkpoint(tmp_path / "run") == (
        first, [(third, f"{WEIGHTS} has 10 bytes, 1000 when written"),
                (second, "rng.json is missing")])


def test_the_enclosing_checkpoint_of_a_weights_folder(tmp_path):
    [checkpoint] = write_checkpoints(tmp_path / "run", 1)
    for folder in (checkpoint, checkpoint / "trainer", checkpoint / "trainer" / "adapter"):
        assert enclosing_checkpoint(folder) == checkpoint
    assert enclosing_checkpoint(tmp_path) is None


def test_require_intact_says_where_and_what_to_give_instead(tmp_path):
    first, latest = write_checkpoints(tmp_path / "run", 1, 2)
    require_intact(latest, "--checkpoint x")  # whole: nothing said
    cut_short(latest / WEIGHTS)
    with pytest.raises(CheckpointError, match=rf"^--checkpoint x: checkpoint {latest} is "
                                              rf"damaged \({WEIGHTS} has 10 bytes, 1000 when "
                                              rf"written\); the newest intact checkpoint of the "
                                              rf"run is {first}; give it instead$"):
        require_intact(latest, "--checkpoint x")
