"""A generation call's checks, made once for every backend: its length, and its top-p and top-k
(the call's own values, else the backend's options). Light at import."""

from __future__ import annotations

from plugins.backends.generation_errors import GenerationError


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


def call_sampling(max_new_tokens: int, top_p: float | None, top_k: int | None,
                  default_top_p: float = 1.0, default_top_k: int = 0) -> tuple[float, int]:
    """What every backend checks before it generates: ``max_new_tokens`` at least 1, and
    ``(top_p, top_k)`` for the call as :func:`truncation` gives them."""
    if max_new_tokens < 1:
        raise GenerationError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    return truncation(default_top_p, default_top_k, top_p, top_k)
