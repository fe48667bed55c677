"""The sandbox plugin: ``process`` registered with its options, ``ray`` refused with the install
line when Ray is missing, and loading the plugin (and the commands it adds) stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spade_core.errors import ConfigError
from spade_core.plugins import load_plugins


def test_the_sandbox_plugin_is_registered_with_options():
    from spade_core.plugins import load_plugins

    component = load_plugins().registry.resolve("sandbox", "process", "sandbox")
    options = component.options()
    assert options.workers >= 1 and options.allow_unisolated is False
    with pytest.raises(Exception, match="extra"):
        component.options.model_validate({"no_such_option": 1})


def test_cli_stays_light():
    code = ("import sys, argparse; import sandbox.plugin, sandbox.sandbox_bench; "
            "from spade_core.cli import check_env_cmd, bench_cmd, doctor_cmd; "
            "sub = argparse.ArgumentParser().add_subparsers(); "
            "check_env_cmd.add_parser(sub); bench_cmd.add_parser(sub); doctor_cmd.add_parser(sub); "
            "heavy = [m for m in ('RestrictedPython', 'torch', 'gymnasium', 'numpy') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_selecting_ray_without_ray_is_a_config_error_saying_how_to_install(monkeypatch):
    import importlib.util

    from sandbox import plugin as sandbox_plugin

    real = importlib.util.find_spec
    monkeypatch.setattr(sandbox_plugin.importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'spade-rl\[ray\]'"):
        load_plugins().registry.build("sandbox", "ray", {}, "sandbox")


def test_loading_the_plugins_does_not_import_ray():
    code = ("import sys; from spade_core.plugins import load_plugins; load_plugins(); "
            "import sandbox.plugin; assert 'ray' not in sys.modules, 'ray imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
