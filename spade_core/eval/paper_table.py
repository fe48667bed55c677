"""The paper's two result tables (``spade eval --table rq1|rq2``, and ``spade report`` for a
run's in-loop evaluations): each column is one suite's bucket (or overall) pass@1 with a 95 %
interval, and a baseline column and the difference when a baseline is given. A column whose
suite was not run reads ``n/a``. The mapping follows the reference's
``eval_offline/table_mapping.py`` (docs/eval.md).

The interval is over the items for one run (seed), and over the seeds when several runs are
given: Student's t-interval of the per-seed means."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from spade_core.eval.scores import SuiteResult
from spade_core.intervals import t_quantile

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
#: The suite options each table plays by default (under the config's ``eval.options`` and
#: ``--option``): the protocol the paper's figures come from (docs/eval.md, "The paper's tables").
TABLE_OPTIONS: dict[str, dict[str, dict[str, Any]]] = {
    "rq1": {"reasoning-gym": {"protocol": "reference"},
            "livecodebench": {"release": "release_v6", "temperature": 0.2}},
    "rq2": {}}
#: Suites whose buckets average their categories (each category weighs the same, as the
#: authors report them) and whose overall weighs the buckets: ACEBench's summary is
#: 0.578 normal + 0.2676 special + 0.1545 agent (``model_eval/evaluation_helper.py``). An item's
#: category is its id without the trailing numbers (``normal_atom_bool_3``).
WEIGHTED: dict[str, dict[str, float]] = {
    "acebench": {"normal": 0.578, "special": 0.2676, "agent": 0.1545}}
#: BFCL-v4's overall accuracy as bfcl_eval computes it (``generate_leaderboard_csv`` in
#: ``bfcl_eval/eval_checker/eval_runner_helper.py``): five groups weighted 10/10/10/30/40, each
#: the plain mean of its parts (``mean``) or their mean weighted by entry count (``count``); a
#: category that was not run counts 0 (bfcl_eval's "N/A"). Leaves are the suite's categories.
BfclNode = tuple[str, tuple["str | BfclNode", ...]]
BFCL_OVERALL: tuple[tuple[str, float, BfclNode], ...] = (
    ("non-live", 0.1, ("mean", (("mean", ("simple", "java", "javascript")), "multiple",
                                "parallel", "parallel_multiple"))),
    ("live", 0.1, ("count", ("live_simple", "live_multiple", "live_parallel",
                             "live_parallel_multiple"))),
    ("irrelevance", 0.1, ("mean", ("irrelevance", "live_irrelevance"))),
    ("multi-turn", 0.3, ("mean", ("multi_turn_base", "multi_turn_miss_func",
                                  "multi_turn_miss_param", "multi_turn_long_context"))),
    ("agentic", 0.4, ("mean", (("mean", ("web_search_base", "web_search_no_snippet")),
                               ("mean", ("memory_kv", "memory_vector", "memory_rec_sum"))))))
#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.96


class Cell(NamedTuple):
    """One column's figure: pass@1, the half-width of its 95 % interval (``None`` when unknown,
    e.g. an older run's metrics), the items (summed over seeds) and the seeds it pools."""

    mean: float
    half: float | None
    items: int
    seeds: int = 1


#: A column's figure by (suite, bucket), ``None`` when not run.
Lookup = Callable[[str, str], "Cell | None"]


def cell(results: Sequence[SuiteResult], suite: str, bucket: str) -> Cell | None:
    """One run's column, or ``None`` when the suite or bucket was not run. The interval is the
    normal one over the items' pass@1 values (``c/n`` each): ``1.96 * s / sqrt(m)``, ``s`` their
    sample standard deviation. Suites in :data:`WEIGHTED` average categories instead
    (:func:`weighted_cell`)."""
    for result in results:
        if result.suite != suite:
            continue
        if suite in WEIGHTED:
            return weighted_cell(result, WEIGHTED[suite], bucket)
        if suite == "bfcl" and bucket == "overall":
            return bfcl_cell(result)
        rows = [r for r in result.items if bucket == "overall" or r["bucket"] == bucket]
        if not rows:
            return None
        values = [r["correct"] / r["n"] if r["n"] else 0.0 for r in rows]
        mean = sum(values) / len(values)
        if len(values) < 2:
            return Cell(mean, 0.0, len(values))
        return Cell(mean, Z95 * _sd(values, mean) / math.sqrt(len(values)), len(values))
    return None


def weighted_cell(result: SuiteResult, weights: dict[str, float], bucket: str) -> Cell | None:
    """A bucket as the mean of its categories' pass@1 (the interval from the categories'
    variances: ``1.96 * sqrt(sum s_c^2 / n_c) / C``); ``overall`` as the weighted sum of the
    buckets (``None`` unless every weighted bucket was run; interval ``sqrt(sum (w h)^2)``)."""
    if bucket == "overall":
        parts = [(w, weighted_cell(result, weights, b)) for b, w in weights.items()]
        if any(c is None for _, c in parts):
            return None
        return Cell(sum(w * c.mean for w, c in parts),
                    math.sqrt(sum((w * (c.half or 0.0)) ** 2 for w, c in parts)),
                    sum(c.items for _, c in parts))
    strata: dict[str, list[float]] = {}
    for row in result.items:
        if row["bucket"] == bucket:
            strata.setdefault(re.sub(r"(_\d+)+$", "", str(row["id"])), []).append(
                row["correct"] / row["n"] if row["n"] else 0.0)
    if not strata:
        return None
    means = {c: sum(v) / len(v) for c, v in strata.items()}
    variance = sum(_sd(v, means[c]) ** 2 / len(v) for c, v in strata.items() if len(v) > 1)
    return Cell(sum(means.values()) / len(means), Z95 * math.sqrt(variance) / len(means),
                sum(len(v) for v in strata.values()))


def bfcl_leaf_weights(result: SuiteResult) -> dict[str, float]:
    """Each category's weight in BFCL's overall accuracy (:data:`BFCL_OVERALL`): count-weighted
    parts by the items run, or for a category not run its entry count in the result's
    ``notes["category_sizes"]`` (0 when unknown)."""
    run = {b: s.items for b, s in result.buckets.items()}
    sizes = dict(result.notes.get("category_sizes") or {})
    weights: dict[str, float] = {}

    def spread_over(node: "str | BfclNode", weight: float) -> None:
        if isinstance(node, str):
            weights[node] = weights.get(node, 0.0) + weight
            return
        kind, parts = node
        if kind == "count":
            counts = [run.get(p, sizes.get(p, 0)) if isinstance(p, str) else 0 for p in parts]
            total = sum(counts)
            for part, count in zip(parts, counts):
                spread_over(part, weight * count / total if total else 0.0)
        else:
            for part in parts:
                spread_over(part, weight / len(parts))

    for _, weight, node in BFCL_OVERALL:
        spread_over(node, weight)
    return weights


def bfcl_cell(result: SuiteResult) -> Cell | None:
    """BFCL's official overall accuracy of one run: ``sum w_c * acc_c`` over the categories
    (:func:`bfcl_leaf_weights`; not run: 0), ``acc_c`` the category's pass@1; interval
    ``1.96 * sqrt(sum w_c^2 s_c^2 / n_c)``."""
    strata: dict[str, list[float]] = {}
    for row in result.items:
        strata.setdefault(str(row["bucket"]), []).append(
            row["correct"] / row["n"] if row["n"] else 0.0)
    if not strata:
        return None
    weights = bfcl_leaf_weights(result)
    mean = sum(weights.get(c, 0.0) * sum(v) / len(v) for c, v in strata.items())
    variance = sum(weights.get(c, 0.0) ** 2 * _sd(v, sum(v) / len(v)) ** 2 / len(v)
                   for c, v in strata.items() if len(v) > 1)
    return Cell(mean, Z95 * math.sqrt(variance), sum(len(v) for v in strata.values()))


def bfcl_remarks(runs: Sequence[Sequence[SuiteResult]]) -> list[str]:
    """Beside the BFCL-v4 column: each group's and each category's pass@1 (the first run's),
    and the categories that were not run (counted 0 in the overall)."""
    results = [r for run in runs[:1] for r in run if r.suite == "bfcl"]
    if not results:
        return []
    result = results[0]
    weights = bfcl_leaf_weights(result)
    figures = {b: s.pass_at_1 for b, s in result.buckets.items()}
    groups = []
    for name, weight, node in BFCL_OVERALL:
        leaves = _leaves(node)
        share = sum(weights[c] for c in leaves)
        value = sum(weights[c] * figures.get(c, 0.0) for c in leaves) / share if share else 0.0
        groups.append(f"{name} {100 * value:.1f} ({100 * weight:.0f} %)")
    lines = ["BFCL-v4 is bfcl_eval's overall accuracy: " + ", ".join(groups)]
    lines.append("bfcl categories: " + ", ".join(f"{c} {100 * v:.1f}" for c, v in figures.items()))
    missing = [c for c in weights if c not in figures]
    if missing:
        lines.append("bfcl categories not run (counted 0, as bfcl_eval counts them): "
                     + ", ".join(missing))
    return lines


def _leaves(node: "str | BfclNode") -> list[str]:
    return [node] if isinstance(node, str) else [c for p in node[1] for c in _leaves(p)]


def seed_cell(runs: Sequence[Sequence[SuiteResult]], suite: str, bucket: str) -> Cell | None:
    """A column over several runs (seeds): with one run that has the column, its own cell; with
    ``S >= 2``, the mean of the per-seed pass@1 and the t-interval ``t(0.975, S-1) * s /
    sqrt(S)`` of those means (``s`` their sample standard deviation). Runs without the column
    are left out."""
    cells = [c for c in (cell(run, suite, bucket) for run in runs) if c is not None]
    if len(cells) < 2:
        return cells[0] if cells else None
    means = [c.mean for c in cells]
    mean = sum(means) / len(means)
    half = t_quantile(len(means) - 1) * _sd(means, mean) / math.sqrt(len(means))
    return Cell(mean, half, sum(c.items for c in cells), len(cells))


def runs_lookup(runs: Sequence[Sequence[SuiteResult]]) -> Lookup:
    """The columns of one or more runs (seeds) of ``spade eval``."""
    return lambda suite, bucket: seed_cell(runs, suite, bucket)


def paper_table(name: str, results: Sequence[SuiteResult] | Sequence[Sequence[SuiteResult]],
                baseline: Sequence[SuiteResult] | Sequence[Sequence[SuiteResult]] | None = None,
                labels: tuple[str, str] = ("model", "baseline")) -> str:
    """One row per column of the paper's table ``name``: the model's pass@1 ± interval (in %),
    and with a baseline its figure and the difference. ``results`` (and ``baseline``) are one
    run's suite results, or a list of runs, one per seed."""
    runs, compared = _as_runs(results), _as_runs(baseline) if baseline is not None else None
    text = render(name, runs_lookup(runs), runs_lookup(compared) if compared is not None else None,
                  labels)
    remarks = protocol_remarks(name, [*runs, *(compared or [])])
    if any(suite == "bfcl" for _, suite, _ in COLUMNS[name]):
        remarks += bfcl_remarks(runs)
    return "\n".join([text, *remarks])


def protocol_remarks(name: str, runs: Sequence[Sequence[SuiteResult]]) -> list[str]:
    """A line per suite of the table whose results say they were played under another protocol
    than the paper's (:data:`TABLE_OPTIONS`; results of older versions say nothing)."""
    lines = []
    for suite, wanted in TABLE_OPTIONS.get(name, {}).items():
        for key, value in wanted.items():
            played = {str(r.notes[key]) for run in runs for r in run
                      if r.suite == suite and key in r.notes}
            if played - {str(value)}:
                lines.append(f"note: {suite} was played with {key} "
                             f"{', '.join(sorted(played))}, not the paper's {value}")
    return lines


def render(name: str, mine: Lookup, other: Lookup | None = None,
           labels: tuple[str, str] = ("model", "baseline")) -> str:
    """The table ``name`` from column figures; a last line says what the intervals are over."""
    head = ["column", "suite/bucket", labels[0]] + ([labels[1], "delta"] if other is not None else [])
    rows, seeds = [], set()
    for column, suite, bucket in COLUMNS[name]:
        figure = mine(suite, bucket)
        row = [column, f"{suite}/{bucket}", show(figure)]
        if other is not None:
            compared = other(suite, bucket)
            row += [show(compared), f"{100 * (figure.mean - compared.mean):+.1f}"
                    if figure and compared else "n/a"]
            seeds.add(compared.seeds if compared else None)
        seeds.add(figure.seeds if figure else None)
        rows.append(row)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    many = sorted(s for s in seeds if s and s > 1)
    lines.append("pass@1 in % ± 95 % interval, "
                 + (f"over seeds (t-interval of per-seed means; seeds: "
                    f"{', '.join(map(str, many))})" if many else "over items"))
    return "\n".join(lines)


def show(figure: Cell | None) -> str:
    """A cell as printed: ``45.0 ± 3.1`` (in %), ``45.0`` without an interval, ``n/a``."""
    if figure is None:
        return "n/a"
    if figure.half is None:
        return f"{100 * figure.mean:.1f}"
    return f"{100 * figure.mean:.1f} ± {100 * figure.half:.1f}"


def _as_runs(results: Sequence[SuiteResult] | Sequence[Sequence[SuiteResult]] | None
             ) -> list[Sequence[SuiteResult]]:
    if not results:
        return []
    if isinstance(results[0], SuiteResult):
        return [results]  # type: ignore[list-item]
    return list(results)  # type: ignore[arg-type]


def _sd(values: Sequence[float], mean: float) -> float:
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
