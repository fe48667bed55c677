"""spade_core/distributed.py: this process's rank read from the launcher's variables, a plain run
being rank 0 of 1, and values out of range or unreadable falling back."""

from __future__ import annotations

import pytest

from spade_core.distributed import LaunchInfo, launch_info


@pytest.fixture
def env(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)

    def set_(**values):
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        return launch_info()
    return set_


def test_a_plain_run_is_the_main_process_alone(env):
    info = env()
    assert info == LaunchInfo(rank=0, world_size=1, local_rank=0)
    assert info.main and not info.distributed


def test_a_follower_of_a_torchrun_launch(env):
    info = env(RANK="3", WORLD_SIZE="4", LOCAL_RANK="1")
    assert (info.rank, info.world_size, info.local_rank) == (3, 4, 1)
    assert not info.main and info.distributed


def test_bad_values_fall_back_and_the_rank_stays_in_the_world(env):
    assert env(RANK="x", WORLD_SIZE=" ", LOCAL_RANK="-2") == LaunchInfo(0, 1, 0)
    assert env(RANK="9", WORLD_SIZE="2").rank == 1
    assert env(RANK="-1", WORLD_SIZE="0") == LaunchInfo(0, 1, 0)
