"""Statistics over seeds: each arm's held-out score minus the reference arm's at the same seed
(paired), their mean and a two-sided Student-t interval over the seeds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from spade_core.intervals import t_quantile

CONFIDENCE = 0.95


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> dict[str, Any]:
    """Mean of ``values`` (one per seed) with a two-sided Student-t interval at ``confidence``
    (``n - 1`` degrees of freedom); ``low``/``high`` are ``None`` with fewer than two values."""
    n = len(values)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "low": None, "high": None,
                "confidence": confidence}
    mean = sum(values) / n
    if n < 2:
        return {"n": 1, "mean": mean, "sd": None, "low": None, "high": None,
                "confidence": confidence}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(n - 1, confidence) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "low": mean - half, "high": mean + half,
            "confidence": confidence}


def paired(scores: dict[str, dict[int, float]], reference: str) -> dict[str, dict[str, Any]]:
    """``scores[arm][seed]`` -> per arm other than ``reference``: the per-seed differences to the
    reference (seeds both have) and their interval."""
    ref = scores.get(reference, {})
    out = {}
    for arm, by_seed in scores.items():
        if arm == reference:
            continue
        seeds = sorted(s for s in by_seed if s in ref)
        diffs = {s: by_seed[s] - ref[s] for s in seeds}
        out[arm] = {"per_seed": {str(s): d for s, d in diffs.items()},
                    **t_interval(list(diffs.values()))}
    return out


def mean_interval(by_seed: dict[int, float]) -> dict[str, Any]:
    """An arm's own score over seeds, with its interval."""
    return t_interval([by_seed[s] for s in sorted(by_seed)])
