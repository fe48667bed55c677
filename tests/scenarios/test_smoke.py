"""``spade run --smoke``: a real smoke run of the quickstart through the CLI, with stderr to a file
as in a batch job (the overrides it derives: tests/core/config/test_smoke.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from fakes.cli import ROOT, SPADE

QUICKSTART = ROOT / "configs" / "quickstart.yaml"


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


@pytest.mark.slow
def test_smoke_run_of_the_arithmetic_ladder(tmp_path):
    """The ladder's self-play config (configs/arithmetic.yaml: the bundled model designs cells
    through the skeleton, plays them in the sandbox, GRPO) shrunk by --smoke: it completes, and
    what it designed are programs of the family's cells."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPADE_PROGRESS", "COLUMNS")}
    env["OMP_NUM_THREADS"] = "1"
    run = tmp_path / "run"
    result = subprocess.run(
        [*SPADE, "run", str(ROOT / "configs" / "arithmetic.yaml"), "--smoke",
         "--set", f"run.dir={run}"],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "run completed after 1 of 1 iteration in" in result.stderr
    from plugins.families.arithmetic import ALL_CELLS, cell_of_program

    records = [json.loads(p.read_text()) for p in (run / "envs").glob("*.json")]
    assert records and all(r["family"] == "arithmetic" for r in records)
    designed = [cell_of_program(p.read_text()) for p in (run / "envs").glob("*.py")]
    assert all(cell in ALL_CELLS for cell in designed if cell is not None)
