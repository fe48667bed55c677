"""pass@k (the unbiased estimator of Chen et al. 2021), per bucket and overall, and the tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any

from spade_core.interfaces import EvalItem


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` samples drawn from ``n`` (``c`` correct) is
    correct: ``1 - C(n - c, k) / C(n, k)``."""
    if n <= 0 or k <= 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass
class BucketScore:
    """One bucket's (or a suite's overall) figures."""

    items: int
    samples: int
    pass_at_1: float
    pass_at_k: float
    mean_score: float


@dataclass
class SuiteResult:
    """A suite's figures per bucket and overall (mean over items, every bucket weighted by its
    number of items)."""

    suite: str
    k: int
    overall: BucketScore
    buckets: dict[str, BucketScore] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarise(suite: str, items: Sequence[EvalItem], scores: Sequence[Sequence[float]], k: int,
              threshold: float) -> SuiteResult:
    """Per-item successes (score at ``threshold``) into pass@1, pass@k and the mean score."""
    rows = []
    for item, item_scores in zip(items, scores, strict=True):
        n = len(item_scores)
        c = sum(1 for s in item_scores if s >= threshold)
        rows.append({"id": item.id, "bucket": item.bucket, "n": n, "correct": c,
                     "scores": [round(s, 4) for s in item_scores]})

    def figures(selected: list[dict[str, Any]]) -> BucketScore:
        if not selected:
            return BucketScore(0, 0, 0.0, 0.0, 0.0)
        return BucketScore(
            items=len(selected), samples=sum(r["n"] for r in selected),
            pass_at_1=_mean([pass_at_k(r["n"], r["correct"], 1) for r in selected]),
            pass_at_k=_mean([pass_at_k(r["n"], r["correct"], k) for r in selected]),
            mean_score=_mean([_mean(r["scores"]) for r in selected]))

    buckets = {b: figures([r for r in rows if r["bucket"] == b])
               for b in dict.fromkeys(r["bucket"] for r in rows)}
    return SuiteResult(suite=suite, k=k, overall=figures(rows), buckets=buckets, items=rows)


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def table(results: Sequence[SuiteResult], baseline: Sequence[SuiteResult] | None = None,
          labels: tuple[str, str] = ("model", "baseline")) -> str:
    """A plain-text table: suite, bucket, items, pass@1 (and pass@k when k > 1); with a baseline,
    its pass@1 and the difference side by side."""
    base = {(r.suite, b): s for r in baseline or () for b, s in [*r.buckets.items(),
                                                                  ("overall", r.overall)]}
    show_k = any(r.k > 1 for r in results)
    head = ["suite", "bucket", "items", f"pass@1 {labels[0]}" if baseline else "pass@1"]
    if show_k:
        head.append(f"pass@{max(r.k for r in results)}")
    if baseline:
        head += [f"pass@1 {labels[1]}", "delta"]
    rows = []
    for result in results:
        for bucket, score in [*result.buckets.items(), ("overall", result.overall)]:
            row = [result.suite, bucket, str(score.items), f"{100 * score.pass_at_1:.1f}"]
            if show_k:
                row.append(f"{100 * score.pass_at_k:.1f}")
            if baseline:
                other = base.get((result.suite, bucket))
                row += ([f"{100 * other.pass_at_1:.1f}",
                         f"{100 * (score.pass_at_1 - other.pass_at_1):+.1f}"]
                        if other else ["-", "-"])
            rows.append(row)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(r, widths))) for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
