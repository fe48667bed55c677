"""The backends' errors: a failed generation is a spade error, an unresolvable model spec a
config error (exit status 2, reported like any other config mistake)."""

from __future__ import annotations

import pytest

from plugins.backends.generation_errors import GenerationError, ModelSourceError
from spade_core.errors import ConfigError, SpadeError


def test_a_generation_error_is_a_spade_error_but_not_a_config_error():
    assert issubclass(GenerationError, SpadeError)
    assert not issubclass(GenerationError, ConfigError)


def test_a_model_source_error_is_caught_as_a_config_error_with_its_message():
    with pytest.raises(ConfigError, match="unknown bundled model 'x'"):
        raise ModelSourceError("unknown bundled model 'x'")
