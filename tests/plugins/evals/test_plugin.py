"""The evals plugin: its suites registered with their options models, each honouring the eval
suite interface, and the plugin light at import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spade_core.components import BuildContext
from spade_core.interfaces import EvalSuite
from spade_core.plugins import load_plugins
from spade_core.testing import check_component, load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.cli import ROOT


@pytest.fixture(autouse=True)
def _sandbox(scoring_sandbox):
    global SANDBOX
    SANDBOX = scoring_sandbox


SANDBOX = None


def test_hook_register_eval_suites():
    assert load_test_plugins(evals_plugin).registry.names("eval_suite") == [
        "acebench", "aime", "arithmetic", "bfcl", "gem", "gpqa-diamond", "livecodebench",
        "programs", "reasoning-gym", "tau2"]


def test_installed_plugin_registers_the_suites():
    loaded = load_plugins()
    assert {"aime", "bfcl", "gpqa-diamond", "programs", "reasoning-gym"} <= set(
        loaded.registry.names("eval_suite"))


@pytest.mark.parametrize("name", ["reasoning-gym", "bfcl"])
def test_suites_honour_the_interface(name):
    suite = check_component(load_test_plugins(evals_plugin), "eval_suite", name,
                            context=BuildContext(components={"sandbox": SANDBOX}))
    assert isinstance(suite, EvalSuite)


def test_each_suite_is_registered_with_its_options_model():
    from plugins.evals import options

    registry = load_test_plugins(evals_plugin).registry
    for name, _module, model, _summary in evals_plugin.SUITES:
        assert registry.resolve("eval_suite", name, "test").options is getattr(options, model)


def test_importing_the_plugin_imports_no_suite_and_no_heavy_package():
    code = ("import sys, plugins.evals.plugin; print(sorted(m for m in sys.modules if m in "
            "('torch', 'transformers', 'numpy', 'reasoning_gym', 'bfcl_eval') or "
            "m.startswith('plugins.evals.') and m.endswith('_suite')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
