"""``spade bench loop``: the loop's own overhead with a scripted zero-latency policy (a test
double for the model), through the real sandbox, memory and estimator of the quickstart config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.cli import ROOT



@pytest.mark.slow
def test_bench_loop_runs_the_quickstart_pipeline():
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "spade_core.cli", "bench", "loop", "--json", "--envs", "6",
         "--rollouts", "2"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # Every seed program is valid and new, so all six are played: 2 x 2 episodes each.
    assert result["envs_played"] == 6 and result["episodes"] == 24
    assert result["envs_per_second"] > 0 and result["goal_envs_per_second"] == 50
    assert result["pipeline"] == "validate+hint+rollout+estimate+remember"
    assert result["pipeline_seconds"] <= result["seconds_with_dedupe"]
    assert {"validate", "dedupe", "hint", "rollout", "estimate"} <= set(result["phase_seconds"])
