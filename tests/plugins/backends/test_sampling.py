"""Per-call top-p and top-k: the call's values over the backend's, checked the same way for
every backend (the backends' own tests check that the values reach their samplers)."""

from __future__ import annotations

import pytest

from plugins.backends.errors import GenerationError
from plugins.backends.sampling import truncation


def test_a_call_overrides_the_backend_and_none_keeps_it():
    assert truncation(1.0, 0) == (1.0, 0)
    assert truncation(0.9, 40, None, None) == (0.9, 40)
    assert truncation(0.9, 40, 0.95, 20) == (0.95, 20)
    assert truncation(0.9, 40, top_k=0) == (0.9, 0)  # 0 switches top-k off for this call


@pytest.mark.parametrize("top_p, top_k, message", [
    (0.0, None, "top_p must be in"), (1.5, None, "top_p must be in"),
    (None, -1, "top_k must be >= 0")])
def test_out_of_range_values_are_clear_errors(top_p, top_k, message):
    with pytest.raises(GenerationError, match=message):
        truncation(1.0, 0, top_p, top_k)
