"""The plugin guide in docs/plugins.md, done for real: build the example package from the page,
pip install it into the venv, see it in ``spade plugins`` and select it in a config."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from fakes.cli import ROOT, run_spade

DOC = ROOT / "docs" / "plugins.md"


def documented_files() -> dict[str, str]:
    """Fenced blocks on the page tagged ``file=NAME``."""
    text = DOC.read_text()
    return {m.group(1): m.group(2) for m in
            re.finditer(r"```\w+ file=(\S+)\n(.*?)```", text, flags=re.S)}


@pytest.fixture
def installed_gap(tmp_path):
    files = documented_files()
    assert set(files) == {"pyproject.toml", "spade_gap.py"}
    package = tmp_path / "spade-gap"
    package.mkdir()
    for name, body in files.items():
        (package / name).write_text(body)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
           "--no-index", str(package)]
    subprocess.run(pip, check=True, capture_output=True, text=True, timeout=300)
    try:
        yield
    finally:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", "spade-gap"],
                       capture_output=True, timeout=300)


@pytest.mark.slow
def test_documented_plugin_installs_lists_and_is_selectable(installed_gap, tmp_path):
    rows = json.loads(run_spade("plugins", "--json").stdout)
    gap = [r for r in rows if r["name"] == "gap"]
    assert gap == [{"name": "gap", "kind": "difficulty_estimator", "plugin": "gap",
                    "distribution": "spade-gap", "version": "0.1.0",
                    "summary": "hinted minus unhinted wins", "error": None}]
    result = run_spade("config", "check", str(ROOT / "configs" / "quickstart.yaml"),
                       "--set", "estimator.plugin=gap", "--set",
                       "estimator.options.floor_negative=false", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["estimator"] == {"plugin": "gap",
                                                      "options": {"floor_negative": False}}
    # Its own options schema is enforced.
    result = run_spade("config", "check", str(ROOT / "configs" / "quickstart.yaml"),
                       "--set", "estimator.plugin=gap", "--set", "estimator.options.colour=1")
    assert result.returncode == 2 and "estimator.options.colour: unknown option" in result.stderr
    # And the contract checker from the guide passes on it.
    check = ("import spade_gap\nfrom spade_core.testing import check_component, "
             "load_test_plugins\ncheck_component(load_test_plugins(spade_gap), "
             "'difficulty_estimator', 'gap')\nprint('ok')\n")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
