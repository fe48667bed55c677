"""``spade run --smoke``: the overrides it derives (real configs, real plugin registry) and a real
smoke run of the quickstart through the CLI, with stderr to a file as in a batch job."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from spade_core.api import load_config
from spade_core.config.load import read_config_file
from spade_core.config.smoke import smoke_overrides
from spade_core.errors import ConfigError
from spade_core.plugins import load_plugins

from fakes.cli import ROOT, SPADE

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
    assert "memory.options.mastery_rollouts=1" in applied  # windows follow the rollouts
    config = load_config(QUICKSTART, applied + ["run.iterations=2"], loaded).config
    assert config.run.iterations == 2 and config.memory.options["mastery_rollouts"] == 1


def test_every_gpu_config_shrinks_to_a_checkable_one(loaded):
    for path in sorted((ROOT / "configs").glob("gpu-*.yaml")):
        applied = smoke_overrides(read_config_file(path), [], loaded.registry, str(path))
        load_config(path, applied, loaded)  # no window or schema problem


@pytest.mark.slow
def test_smoke_run_of_the_quickstart(tmp_path):
    """The real quickstart (bundled model, real sandbox, GRPO) shrunk by --smoke, its stderr a
    file: it completes, says which overrides it applied, and logs one line per phase."""
    log = tmp_path / "run.log"
    env = {k: v for k, v in os.environ.items() if k not in ("SPADE_PROGRESS", "COLUMNS")}
    env["OMP_NUM_THREADS"] = "1"
    with log.open("w") as err:
        result = subprocess.run(
            [*SPADE, "run", str(QUICKSTART), "--smoke", "--set", f"run.dir={tmp_path / 'run'}",
             # the skeleton designer's Q/A answers fit 96 tokens (as in test_e2e); --set wins
             "--set", "loop.designer_max_tokens=96"],
            stdout=subprocess.PIPE, stderr=err, text=True, timeout=600, env=env, cwd=ROOT)
    text = log.read_text()
    assert result.returncode == 0, text[-3000:]
    assert "--smoke: one small iteration" in text and "memory.options.mastery_rollouts=2" in text
    assert "run completed after 1 of 1 iteration in" in text
    for phase in ("sample", "design", "validate", "train"):
        assert re.search(rf"^iteration 0 {phase}: \d+(/\d+)? \w+ \(\d+\.\d s\)$", text, re.M), text
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["envs_proposed"] <= 2
    config = (tmp_path / "run" / "config.resolved.yaml").read_text()
    assert "designer_max_tokens: 96" in config and "regeneration_interval: 1" in config
