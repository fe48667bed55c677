"""spade_core/config/smoke.py: --smoke shrinks a config to one that passes the check."""

from __future__ import annotations

import pytest

from spade_core.api import load_config
from spade_core.config.load import read_config_file
from spade_core.config.smoke import smoke_overrides
from spade_core.errors import ConfigError
from spade_core.plugins import load_plugins

from fakes.cli import ROOT


QUICKSTART = ROOT / "configs" / "quickstart.yaml"


@pytest.fixture(scope="module")
def loaded():
    return load_plugins()


def test_one_iteration_alone_is_refused_but_smoke_passes_the_check(loaded):
    with pytest.raises(ConfigError, match="mastery_rollouts"):
        load_config(QUICKSTART, ["run.iterations=1"], loaded)
    applied = smoke_overrides(read_config_file(QUICKSTART), [], loaded.registry, "q")
    assert applied == ["run.iterations=1", "loop.regeneration_interval=1",
                       "loop.envs_per_iteration=2", "loop.rollouts_per_env=2",
                       "loop.agent_max_tokens=32",
                       "loop.hint_max_tokens=32", "memory.options.mastery_rollouts=2",
                       "memory.options.too_hard_rollouts=2"]
    config = load_config(QUICKSTART, applied, loaded).config
    assert (config.run.iterations, config.loop.regeneration_interval) == (1, 1)
    assert config.loop.designer_max_tokens == 160  # kept: a shorter program would be refused


def test_smaller_sizes_stay_and_the_users_set_wins(loaded):
    user = ["loop.rollouts_per_env=1", "memory=faiss"]
    applied = smoke_overrides(read_config_file(QUICKSTART), user, loaded.registry, "q")
    assert "loop.rollouts_per_env=2" not in applied
    assert "memory.options.mastery_rollouts=1" in applied  # the status counts follow the rollouts
    config = load_config(QUICKSTART, applied + ["run.iterations=2"], loaded).config
    assert config.run.iterations == 2 and config.memory.options["mastery_rollouts"] == 1


def test_every_gpu_config_shrinks_to_a_checkable_one(loaded):
    for path in sorted((ROOT / "configs").glob("gpu-*.yaml")):
        applied = smoke_overrides(read_config_file(path), [], loaded.registry, str(path))
        load_config(path, applied, loaded)  # no status-rollout or schema problem
