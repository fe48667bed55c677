"""spade_core/run_info.py: what the run-event hooks receive as ``run``."""

from __future__ import annotations

from pathlib import Path

from spade_core.run_info import RunInfo


def test_a_fresh_run_starts_at_iteration_zero_and_each_run_has_its_own_extra():
    first = RunInfo(run_dir=Path("runs/a"), config={"run": {"seed": 3}}, seed=3)
    second = RunInfo(run_dir=Path("runs/b"), config={})
    assert (first.iteration, second.seed) == (0, 0)
    first.extra["resumed_from"] = 2
    assert second.extra == {}  # plugins share data per run, never across runs
