"""Top-p and top-k for one generation call: the call's own values, else the backend's options,
checked once for every backend that samples (light at import)."""

from __future__ import annotations

from plugins.backends.errors import GenerationError


def truncation(default_top_p: float, default_top_k: int, top_p: float | None = None,
               top_k: int | None = None) -> tuple[float, int]:
    """``(top_p, top_k)`` for a call: ``top_p``/``top_k`` when given, else the backend's defaults.
    Top-p must be in (0, 1] and top-k at least 0; 1 and 0 switch them off."""
    p = default_top_p if top_p is None else top_p
    k = default_top_k if top_k is None else top_k
    if not 0.0 < p <= 1.0:
        raise GenerationError(f"top_p must be in (0, 1] (1 switches it off), got {p}")
    if k < 0:
        raise GenerationError(f"top_k must be >= 0 (0 switches it off), got {k}")
    return float(p), int(k)
