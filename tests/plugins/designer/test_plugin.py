"""The designer plugin's registration: both prompt strategies with their options models, and a
light import."""

from __future__ import annotations

import subprocess
import sys

import plugins.designer.plugin as designer_plugin
from plugins.designer.options import FullProgramOptions, SkeletonOptions
from spade_core.testing import check_component, load_test_plugins


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
    code = ("import sys, plugins.designer.plugin\n"
            "heavy = [m for m in ('torch', 'transformers', 'plugins.designer.full_program', "
            "'plugins.designer.skeleton') if m in sys.modules]\n"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
