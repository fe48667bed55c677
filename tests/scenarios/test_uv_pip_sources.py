"""scripts/uv_pip_sources.py: the machine's pip sources (find-links, indexes, constraint files)
turned into uv's options for `make`'s set-up, deduplicated, with pip's way of choosing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import SimpleNamespace

from fakes.cli import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("uv_pip_sources",
                                                  ROOT / "scripts" / "uv_pip_sources.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pip_config_becomes_uv_options(monkeypatch):
    script = _script()
    listed = ("global.cert='/etc/ssl/certs/ca.crt'\n"
              ":env:.find-links='/opt/wheels'\n"
              "global.find-links='/opt/wheels'\n"
              "global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'\n"
              "global.constraint='/etc/xdg/pip/constraints.txt'\n")
    monkeypatch.setattr(script.subprocess, "run",
                        lambda *a, **k: SimpleNamespace(stdout=listed))
    assert script.uv_options(script.pip_settings()) == [
        "--find-links", "/opt/wheels", "--extra-index-url", "file:///opt/a/simple",
        "--extra-index-url", "file:///opt/b/simple", "--constraint",
        "/etc/xdg/pip/constraints.txt", "--index-strategy", "unsafe-best-match"]


def test_no_pip_settings_no_options():
    script = _script()
    assert script.uv_options([]) == []
    assert script.uv_options([("index-url", "https://mirror/simple")]) == [
        "--index-url", "https://mirror/simple"]  # one index: nothing to choose between


def test_the_script_runs_with_the_standard_library_alone():
    done = subprocess.run([sys.executable, "-I", str(ROOT / "scripts" / "uv_pip_sources.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
