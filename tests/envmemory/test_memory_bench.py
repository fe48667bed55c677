"""``spade bench memory``: one small run of the benchmark, every section reported."""

from __future__ import annotations

import json

import pytest

from spade_core.cli import main


@pytest.mark.slow
def test_bench_memory_small(capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "memory", "--json", "--size", "3000", "--queries", "40",
                 "--adds", "100", "--switch-size", "1000", "--no-minilm",
                 "--diffuse-size", "2000"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [row["size"] for row in result["scale"]] == [3000]
    row = result["scale"][0]
    assert row["index"]["kind"] == "ivf" and 0.0 < row["recall_at_10"] <= 1.0
    assert row["nprobe_sweep"] and row["numpy_scan_query"]["p50_ms"] > 0
    assert result["adds"]["adds_per_s"] > 0
    dedupe = result["dedupe"]
    assert dedupe["pairs"] >= 60
    assert dedupe["reference_fifo"]["let_through"] == dedupe["near_duplicates"]
    combined = next(r for r in dedupe["rows"] if r["with_fingerprint"])
    assert combined["at_default"]["recall"] > 0.9
    assert set(result["goal"]) == {"size", "p50_ms", "recall_at_10", "met"}
