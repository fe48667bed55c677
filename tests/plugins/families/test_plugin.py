"""The families plugin: its factories build the families with their options, the installed entry
point lists both, and the registration module is light at import."""

from __future__ import annotations

import re
import subprocess
import sys

from spade_core.components import BuildContext

from fakes.cli import ROOT
from plugins.families.options import ReasoningOptions, ToolUseOptions


def test_factories_build_with_selected_skills():
    from plugins.families.plugin import _reasoning, _tool_use
    family = _reasoning(ReasoningOptions(skills=["logic", "math"]), BuildContext())
    assert family.skills == ("logic", "math")
    assert _tool_use(ToolUseOptions(multi_step=False), BuildContext()).multi_step is False


def test_installed_entry_point_lists_both_families(spade):
    result = spade("plugins")
    assert result.returncode == 0, result.stderr
    assert re.search(r"env_family\s+reasoning", result.stdout)
    assert re.search(r"env_family\s+tool-use", result.stdout)


def test_registration_module_is_light():
    code = ("import sys, plugins.families.plugin; heavy = ['gymnasium', 'numpy', 'torch', "
            "'RestrictedPython', 'transformers']; print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_tool_use_options_reach_the_family_through_its_factory():
    import plugins.families.plugin as families_plugin
    from spade_core.components import BuildContext
    from spade_core.testing import load_test_plugins

    from plugins.families.steering import REFERENCE_DOMAINS

    registry = load_test_plugins(families_plugin).registry
    component = registry.components[("env_family", "tool-use")]
    options = ToolUseOptions(domain_set="reference", variant_draw="weighted", difficulty="medium")
    family = component.build(options, BuildContext(seed=3))
    assert family.domains == list(REFERENCE_DOMAINS) and family.seed == 3
    brief = family.target_brief(family.windowed_target(0, 0, 0))
    assert "DIFFICULTY: medium" in brief and "TASK TYPE:" in brief
    # The default keeps this project's rotation over its eight domains.
    default = component.build(ToolUseOptions(), BuildContext(seed=3))
    assert len(default.domains) == 8 and default.variant_draw == "rotate"
