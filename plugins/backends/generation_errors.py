"""Errors raised by the generation backends."""

from __future__ import annotations

from spade_core.errors import ConfigError, SpadeError


class GenerationError(SpadeError):
    """A generation request failed (server unreachable, HTTP error, malformed reply)."""


class ModelSourceError(ConfigError):
    """A model spec could not be resolved to a loadable directory (exit status 2, like other
    config errors: the fix is a different spec or an installed package)."""
