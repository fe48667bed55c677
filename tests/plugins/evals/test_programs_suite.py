"""The ``programs`` suite: a folder of environment programs played unhinted in the sandbox."""

from __future__ import annotations

import shutil

import pytest

from spade_core.plugins import load_plugins

from spade_core.components import BuildContext

from fakes.eval_runs import SUITES

from fakes.cli import ROOT

SEEDS = ROOT / "plugins" / "families" / "seeds"
_suite, _three_ways = SUITES.suite, SUITES.three_ways


@pytest.mark.slow
def test_programs_gold_wrong_half(tmp_path):
    for name in ("fraction_sum.py", "modular_power.py"):
        shutil.copy(SEEDS / "reasoning" / name, tmp_path / name)
    for name in ("bank_rebalance.py", "calendar_booking.py"):
        shutil.copy(SEEDS / "tool_use" / name, tmp_path / name)
    registry = load_plugins().registry
    sandbox = registry.build("sandbox", "process", {"workers": 1}, "test")
    families = [registry.build("env_family", f, {}, "test") for f in ("reasoning", "tool-use")]
    try:
        suite = _suite("programs", {"path": str(tmp_path)}, BuildContext(
            components={"sandbox": sandbox, "env_family": families}))
        items = suite.items(None, 0)
        assert sorted({i.bucket for i in items}) == ["reasoning", "tool-use"]
        assert _three_ways(suite, 4) == (1.0, 0.0, 0.5)
    finally:
        sandbox.close()
