"""The plain-text table ``spade eval`` prints: pass@k per bucket and overall, side by side with
a baseline's (the figures come from :mod:`spade_core.eval.scores`)."""

from __future__ import annotations

from collections.abc import Sequence

from spade_core.eval.scores import SuiteResult


def table(results: Sequence[SuiteResult], baseline: Sequence[SuiteResult] | None = None,
          labels: tuple[str, str] = ("model", "baseline")) -> str:
    """A plain-text table: suite, bucket, items, pass@1 (and pass@k when k > 1); with a baseline,
    its pass@1 and the difference side by side. A suite's notes (how a bucket was scored, a
    secondary figure such as ACEBench's process accuracy) follow the table, one line each."""
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
    lines += [f"{result.suite}: {key}: {_note(value)}" for result in results
              for key, value in result.notes.items()]
    return "\n".join(lines)


def _note(value: object) -> str:
    """A suite's note as the table prints it (fractions as percentages, like the scores)."""
    if isinstance(value, float) and 0.0 <= value <= 1.0:
        return f"{100 * value:.1f}"
    return str(value)
