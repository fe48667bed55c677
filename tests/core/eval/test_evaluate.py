"""spade_core/eval/evaluate.py: the configured backend plays the requested suites with the
request's settings (else the config's), unknown suites and bad options refused before any model,
``eval.data`` given to a suite that reads data and refused for one that does not."""

from __future__ import annotations

import pytest

from spade_core.errors import ConfigError
from spade_core.eval.evaluate import EvalRequest, evaluate, resolve_suite, settings_for, with_data

from fakes.eval_config import known_config


def test_the_backend_plays_the_suite_and_the_scores_are_its_answers():
    resolved, registry = known_config(right=3)
    results, settings = evaluate(resolved, registry, EvalRequest(suites=["known"]))
    [result] = results
    assert result.suite == "known" and result.overall.items == 4
    assert result.overall.pass_at_1 == 0.75
    assert result.buckets["yes"].pass_at_1 == 1.0 and result.buckets["no"].pass_at_1 == 0.5
    assert settings["limit"] is None and settings["checkpoint_folder"] is None
    limited, _ = evaluate(resolved, registry, EvalRequest(suites=["known"], limit=2))
    assert limited[0].overall.items == 2 and limited[0].overall.pass_at_1 == 1.0


def test_settings_come_from_the_request_else_the_config():
    resolved, _ = known_config(right=0)
    one = settings_for(resolved, EvalRequest(suites=["known"]))
    assert one.temperature == 0.0 and one.samples == 1
    assert one.max_new_tokens == resolved.config.loop.agent_max_tokens
    assert one.seed == resolved.config.run.seed
    many = settings_for(resolved, EvalRequest(suites=["known"], samples=4, seed=9,
                                              max_new_tokens=5))
    assert (many.temperature, many.samples, many.seed, many.max_new_tokens) == (0.8, 4, 9, 5)


def test_an_unknown_suite_or_option_is_refused_with_where_to_set_it():
    _, registry = known_config(right=0)
    with pytest.raises(ConfigError, match="--suite nope"):
        resolve_suite(registry, "nope", {})
    with pytest.raises(ConfigError, match="eval.data.known: the eval suite 'known' reads no data"):
        with_data(registry, "known", {}, "some/folder")
    assert with_data(registry, "known", {"x": 1}, None) == {"x": 1}  # no entry: left alone
