"""A generation call's checks: its length, and per-call top-p and top-k (the call's values over
the backend's), checked the same way for every backend (the backends' own tests check that the
values reach their samplers)."""

from __future__ import annotations

import pytest

from plugins.backends.generation_errors import GenerationError
from plugins.backends.sampling import call_sampling, truncation


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


def test_a_call_asks_for_at_least_one_token_and_gets_its_truncation():
    assert call_sampling(8, None, None, 0.9, 40) == (0.9, 40)
    assert call_sampling(1, 0.5, None) == (0.5, 0)
    with pytest.raises(GenerationError, match="max_new_tokens must be at least 1, got 0"):
        call_sampling(0, None, None)
    with pytest.raises(GenerationError, match="top_p must be in"):
        call_sampling(8, 2.0, None)
