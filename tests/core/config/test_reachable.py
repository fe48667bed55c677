"""`spade config check` refuses a run in which no environment can ever get the rollouts its
memory's status rules read, naming the keys to change; configs that can work, and memories without
rollout counts, pass."""

from __future__ import annotations

import pytest

from envmemory.options import MemoryOptions
from spade_core.config.reachable import most_rollouts, status_rollout_problems
from spade_core.config.schema import SpadeConfig

from fakes.cli import ROOT, run_spade


def config(iterations: int, rollouts: int, **loop) -> SpadeConfig:
    return SpadeConfig.model_validate({
        "run": {"iterations": iterations}, "loop": {"rollouts_per_env": rollouts, **loop},
        "corpus": "c", "designer": "d", "families": ["f"], "sandbox": "s", "estimator": "e",
        "memory": "m", "backend": "b"})


FRONTIER = {"schedule": "frontier"}


@pytest.mark.parametrize(("iterations", "rollouts", "loop", "expected"), [
    (2, 3, FRONTIER, 6),                                    # replayed in both iterations
    (20, 3, {**FRONTIER, "replay_max_age": 4}, 12),         # replays stop at the age limit
    (20, 3, {**FRONTIER, "replay_envs": 0}, 3),             # played once: no replay
    (5, 2, {**FRONTIER, "replay_envs": 0, "mode": "fixed-pool", "pool": "p"}, 10),  # the pool
    (20, 3, {}, 12),                                        # a window of 4 (the default)
    (20, 3, {"regeneration_interval": 8}, 24),              # a window of 8
    (2, 3, {"regeneration_interval": 8}, 6),                # cut short by the run
])
def test_most_rollouts_one_environment_can_get(iterations, rollouts, loop, expected):
    assert most_rollouts(config(iterations, rollouts, **loop))[0] == expected


def test_unreachable_status_rollouts_are_refused_with_the_keys_to_change():
    [problem] = status_rollout_problems(config(1, 3), MemoryOptions())
    assert "memory.options.mastery_rollouts and memory.options.too_hard_rollouts" in problem
    assert "loop.rollouts_per_env, run.iterations" in problem and "no environment can get " \
        "more than 3" in problem
    assert status_rollout_problems(config(1, 3), MemoryOptions(mastery_rollouts=3)) == []
    assert status_rollout_problems(config(1, 3), MemoryOptions(too_hard_rollouts=2)) == []
    assert status_rollout_problems(config(6, 3, **FRONTIER), MemoryOptions()) == []
    [short] = status_rollout_problems(config(6, 3), MemoryOptions())  # windows of 4: 12 < 16
    assert "loop.rollouts_per_env, loop.regeneration_interval" in short
    assert status_rollout_problems(config(6, 3, regeneration_interval=6), MemoryOptions()) == []
    assert status_rollout_problems(config(1, 3), {"no": "counts"}) == []  # a memory without counts


def test_config_check_refuses_the_quickstart_cut_to_one_iteration():
    quickstart = str(ROOT / "configs" / "quickstart.yaml")
    assert run_spade("config", "check", quickstart).returncode == 0
    result = run_spade("config", "check", quickstart, "--set", "run.iterations=1")
    assert result.returncode == 2 and "none could ever become mastered or too hard" in \
        result.stderr
