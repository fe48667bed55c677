"""The optional reasoning-gym family's registration: by its entry point, with its options model,
light at import."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("reasoning_gym", reason="the reasoning-gym extra is not installed")

from plugins.families.options import ReasoningGymOptions  # noqa: E402
from fakes.cli import ROOT  # noqa: E402


def test_registered_by_its_entry_point_and_light_at_import():
    from spade_core.plugins import load_plugins

    component = load_plugins().registry.components[("env_family", "reasoning-gym")]
    assert component.options is ReasoningGymOptions
    code = ("import sys, plugins.families.reasoning_gym_plugin; "
            "print(sorted(m for m in ('reasoning_gym', 'numpy', 'sympy', "
            "'plugins.families.reasoning_gym') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
