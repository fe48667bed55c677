"""spade_core/components.py: building a component checks it against its kind's base class; the build
context is documented."""

from __future__ import annotations

import dataclasses

import pytest

from spade_core.components import BuildContext
from spade_core.errors import PluginError
from spade_core.testing import check_component, load_test_plugins

from fakes.contracts import FakeEstimatorPlugin


def test_a_component_missing_a_required_method_fails_when_built():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    component = loaded.registry.resolve("trainer", "fake-half", "trainer")
    with pytest.raises(PluginError, match="failed to start.*train"):
        component.build({}, BuildContext())


def test_a_component_that_does_not_subclass_its_base_is_refused_when_built():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    component = loaded.registry.resolve("trainer", "fake-duck", "trainer")
    with pytest.raises(PluginError, match=r"FakeDuckTrainer, which does not subclass "
                                          r"spade_core\.interfaces\.Trainer"):
        component.build({}, BuildContext())
    with pytest.raises(PluginError, match="does not subclass"):
        check_component(loaded, "trainer", "fake-duck")


def test_the_plugin_guide_documents_every_build_context_field():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "plugins.md").read_text()
    rows = {line.split("|")[1].strip().strip("`") for line in text.splitlines()
            if line.startswith("  | `")}
    assert {f.name for f in dataclasses.fields(BuildContext)} <= rows
