"""The designer plugin's registration: both prompt strategies with their options models, and a
light import."""

from __future__ import annotations


import plugins.designer.plugin as designer_plugin
from plugins.designer.options import FullProgramOptions, SkeletonOptions
from spade_core.testing import check_component, load_test_plugins

from fakes.commands import loaded_by


def test_both_strategies_meet_the_contract():
    loaded = load_test_plugins(designer_plugin)
    for name in ("full-program", "skeleton"):
        check_component(loaded, "prompt_strategy", name)


def test_each_strategy_is_registered_with_its_options_model():
    loaded = load_test_plugins(designer_plugin)
    components = loaded.registry.components
    assert components[("prompt_strategy", "full-program")].options is FullProgramOptions
    assert components[("prompt_strategy", "skeleton")].options is SkeletonOptions


def test_importing_the_plugin_stays_light():
    assert loaded_by("plugins.designer.plugin", ("torch", "transformers",
                                                 "plugins.designer.full_program",
                                                 "plugins.designer.skeleton")) == []
