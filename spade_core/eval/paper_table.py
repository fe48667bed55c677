"""The paper's two result tables (``spade eval --table rq1|rq2``): each column is one suite's
bucket (or overall) pass@1, with a 95 % interval over the items, and a baseline column and the
difference when a baseline is given. A column whose suite was not run reads ``n/a``. The mapping
follows the reference's ``eval_offline/table_mapping.py`` (docs/eval.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from spade_core.eval.scores import SuiteResult

#: table -> (column, suite, bucket or "overall").
COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "rq1": (("AIME-25", "aime", "2025"), ("AIME-26", "aime", "2026"),
            ("GPQA-Diamond", "gpqa-diamond", "overall"),
            ("LiveCodeBench", "livecodebench", "overall"),
            ("RG Math", "reasoning-gym", "math"), ("RG Algorithmic", "reasoning-gym", "algorithmic"),
            ("RG Cognition", "reasoning-gym", "cognition"), ("RG Logic", "reasoning-gym", "logic")),
    "rq2": (("BFCL-v4", "bfcl", "overall"), ("τ²-Retail", "tau2", "retail"),
            ("τ²-Airline", "tau2", "airline"), ("τ²-Telecom", "tau2", "telecom"),
            ("ACEBench Normal", "acebench", "normal"), ("ACEBench Special", "acebench", "special"),
            ("ACEBench Agent", "acebench", "agent"), ("ACEBench", "acebench", "overall")),
}
#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.96


def cell(results: Sequence[SuiteResult], suite: str, bucket: str
         ) -> tuple[float, float, int] | None:
    """(pass@1, half-width of its 95 % interval, items) of one column, or ``None`` when the suite
    or bucket was not run. The interval is the normal one over the items' pass@1 values
    (``c/n`` each): ``1.96 * s / sqrt(m)``, ``s`` their sample standard deviation."""
    for result in results:
        if result.suite != suite:
            continue
        rows = [r for r in result.items if bucket == "overall" or r["bucket"] == bucket]
        if not rows:
            return None
        values = [r["correct"] / r["n"] if r["n"] else 0.0 for r in rows]
        mean = sum(values) / len(values)
        if len(values) < 2:
            return mean, 0.0, len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
        return mean, Z95 * sd / math.sqrt(len(values)), len(values)
    return None


def paper_table(name: str, results: Sequence[SuiteResult],
                baseline: Sequence[SuiteResult] | None = None,
                labels: tuple[str, str] = ("model", "baseline")) -> str:
    """One row per column of the paper's table ``name``: the model's pass@1 ± interval (in %),
    and with a baseline its figure and the difference."""
    head = ["column", "suite/bucket", labels[0]] + ([labels[1], "delta"] if baseline else [])
    rows = []
    for column, suite, bucket in COLUMNS[name]:
        mine = cell(results, suite, bucket)
        row = [column, f"{suite}/{bucket}", _show(mine)]
        if baseline is not None:
            other = cell(baseline, suite, bucket)
            row += [_show(other), f"{100 * (mine[0] - other[0]):+.1f}" if mine and other
                    else "n/a"]
        rows.append(row)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _show(figure: tuple[float, float, int] | None) -> str:
    return "n/a" if figure is None else f"{100 * figure[0]:.1f} ± {100 * figure[1]:.1f}"
