"""The generation benchmark on the bundled model: real token counts and rates per batch size."""

from __future__ import annotations

import pytest


def test_bench_generation_counts_real_tokens(backend):
    from plugins.backends.generation_bench import bench_generation

    results = bench_generation(backend, batch_sizes=(1, 2), max_new_tokens=4, warmup=False)
    assert [r.batch_size for r in results] == [1, 2]
    for r in results:
        assert r.requests == 2 and 2 <= r.completion_tokens <= 8
        assert r.seconds > 0 and r.tokens_per_second == pytest.approx(
            r.completion_tokens / r.seconds, rel=0.05)
