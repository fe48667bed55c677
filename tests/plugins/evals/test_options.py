"""The suites' options: a bad value or a missing one is a ``ConfigError`` naming it, before any
model is loaded."""

from __future__ import annotations

import pytest

from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin


def test_unknown_category_or_missing_option_is_a_config_error_before_any_model():
    from spade_core.errors import ConfigError

    from plugins.evals.bfcl_suite import BfclSuite
    from spade_core.eval.evaluate import resolve_suite

    registry = load_test_plugins(evals_plugin).registry
    with pytest.raises(ConfigError, match=r"--suite bfcl: invalid options \(categories.0: Input "
                                          "should be 'simple'"):
        resolve_suite(registry, "bfcl", {"categories": ["simpel"]})
    with pytest.raises(ConfigError, match="path: Field required"):
        resolve_suite(registry, "programs", {})
    with pytest.raises(ConfigError,
                       match="Installed: acebench, aime, arithmetic, bfcl, gem, gpqa-diamond, "
                             "livecodebench, programs, reasoning-gym, tau2"):
        resolve_suite(registry, "bfc", {})
    with pytest.raises(ConfigError, match="categories are"):
        BfclSuite(["simpel"])
