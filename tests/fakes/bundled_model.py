"""Shared helpers for the backend tests: the bundled model, converted once per user cache and
loaded once per test process."""

from __future__ import annotations

import functools

from plugins.backends.model_source import DEFAULT_MODEL, ResolvedModel, resolve_model


@functools.lru_cache(maxsize=1)
def bundled_model() -> ResolvedModel:
    """The bundled SmolLM2 converted into the user's cache (the first call may convert, ~40 s)."""
    return resolve_model(DEFAULT_MODEL)


@functools.lru_cache(maxsize=1)
def bundled_backend():
    """One TransformersBackend on the bundled model, shared by the tests of this process."""
    from plugins.backends.transformers_backend import TransformersBackend

    return TransformersBackend(bundled_model().path, device="cpu", batch_size=8)
