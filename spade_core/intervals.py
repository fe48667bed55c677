"""Student's t quantiles for the 95 % intervals over seeds, one source for every table (the
paper tables of ``spade eval --table``, the experiments' paired differences)."""

from __future__ import annotations


def t_quantile(df: int, confidence: float = 0.95) -> float:
    """The two-sided ``confidence`` quantile of Student's t with ``df`` degrees of freedom
    (``t(0.975, df)`` at 95 %), from SciPy."""
    if df < 1:
        raise ValueError("t_quantile: degrees of freedom must be at least 1")
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2, df))
