"""Compute accounting of a run, read from its ``metrics.jsonl``: per iteration and cumulated, the
agent's (and designer's) trained samples, the optimiser steps, and the tokens each role
generated (``tokens`` of a metrics row; docs/run-files.md). Samples are read from what every
trainer reports (``<role>_samples``), narrowed to ``<role>_samples_trained`` where the trainer
reports it (GRPO drops samples without advantage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Token roles of a metrics row, in the order the results list them.
ROLES = ("designer", "agent", "hint", "validator", "eval")


def read_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The run's metrics rows, one per iteration (the last row of an iteration written twice
    wins: a resumed run may repeat the iteration it was killed in)."""
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    by_iteration: dict[int, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            by_iteration[int(row["iteration"])] = row
    return [by_iteration[i] for i in sorted(by_iteration)]


def trained(train: dict[str, Any], role: str) -> float:
    """Samples of ``role`` one update trained on: ``<role>_samples_trained`` when the trainer
    reports it, else ``<role>_samples`` (the samples it was given, which every trainer reports)."""
    value = train.get(f"{role}_samples_trained", train.get(f"{role}_samples", 0.0))
    return float(value or 0.0)


def row_compute(row: dict[str, Any]) -> dict[str, float]:
    """One iteration's compute: trained samples per role, optimiser steps, generated tokens per
    role and in all (the in-run evaluation's excluded from ``tokens_total``: it measures, it
    does not train)."""
    train = row.get("train") or {}
    tokens = row.get("tokens") or {}
    out = {"agent_samples": trained(train, "agent"),
           "designer_samples": trained(train, "designer"),
           "optimizer_steps": float(train.get("optimizer_steps", 0.0))}
    for role in ROLES:
        out[f"tokens_{role}"] = float(tokens.get(role, 0))
    out["tokens_total"] = float(sum(v for k, v in tokens.items() if k != "eval"))
    return out


def cumulative(rows: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Compute after each iteration, summed from the run's start (``iterations`` included)."""
    totals: dict[str, float] = {}
    out = []
    for row in rows:
        for key, value in row_compute(row).items():
            totals[key] = totals.get(key, 0.0) + value
        out.append({"iterations": float(row["iteration"] + 1), **totals})
    return out


def largest_step(rows: list[dict[str, Any]], key: str) -> float:
    """The largest one-iteration amount of ``key``: "one batch" in the budget check."""
    return max((row_compute(r)[key] for r in rows), default=0.0)
