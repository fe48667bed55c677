"""``spade bench scoring``: reasoning-gym items scored with their gold replies in the sandbox and
in process, per-item times as JSON; every gold reply scores 1 in the sandbox."""

from __future__ import annotations

import json

import pytest

from fakes.cli import run_spade

pytest.importorskip("reasoning_gym")


def test_bench_scoring_prints_per_item_times_and_full_gold_scores():
    result = run_spade("bench", "scoring", "--json", "--items", "8", "--repeats", "2",
                       "--workers", "1", timeout=600, env={"OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(result.stdout)
    assert figures["items"] == 8 and figures["gold_score"] == 8.0
    assert len(figures["sandbox_ms"]) == 2 and all(ms > 0 for ms in figures["sandbox_ms"])
    assert figures["in_process_ms"] > 0
