"""spade_core/eval/scores.py: pass@k, the summary per bucket and overall."""

from __future__ import annotations

import math

import pytest

from spade_core.eval.scores import pass_at_k, summarise
from spade_core.eval.table import table


def test_pass_at_k_is_the_unbiased_estimator():
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 10, 5) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(4, 2))
    assert pass_at_k(5, 2, 4) == 1.0  # fewer wrong samples than k


def test_summary_per_bucket_and_overall_and_table():
    from spade_core.interfaces import EvalItem

    items = [EvalItem(id=str(i), bucket="ab"[i % 2]) for i in range(4)]
    result = summarise("s", items, [[1, 0], [0, 0], [1, 1], [0, 1]], k=2, threshold=1.0)
    assert result.buckets["a"].pass_at_1 == 0.75 and result.buckets["a"].pass_at_k == 1.0
    assert result.buckets["b"].pass_at_1 == 0.25 and result.buckets["b"].pass_at_k == 0.5
    assert result.overall.pass_at_1 == 0.5 and result.overall.items == 4
    text = table([result], [result])
    assert "pass@2" in text and "+0.0" in text and "overall" in text
