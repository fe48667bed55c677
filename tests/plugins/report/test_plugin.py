"""``spade report RUN_DIR``, registered by the report plugin: the page written where asked or in
the run directory, usage errors, and the plugin light at import."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from spade_core.cli import main

from fakes.cli import ROOT, run_spade


@pytest.mark.slow
def test_cli_writes_the_report(finished_run, tmp_path):
    out = tmp_path / "cli.html"
    result = run_spade("report", str(finished_run), "--out", str(out), "--neighbours", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out) and out.stat().st_size > 10_000
    assert out.read_text().count("<li>") >= 2


def test_cli_default_output_is_in_the_run_dir(finished_run, tmp_path, capsys):
    run_dir = tmp_path / "copy"
    shutil.copytree(finished_run, run_dir)
    assert main(["report", str(run_dir), "--neighbours", "0"]) == 0
    assert capsys.readouterr().out.strip() == str(run_dir / "report.html")
    assert (run_dir / "report.html").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("args, message", [
    (["/no/such/run"], "is not a directory"),
    ([str(ROOT / "docs")], "is not a run directory"),
    (["--neighbours", "-1", str(ROOT)], "must be 0 or more"),
])
def test_cli_usage_errors(args, message):
    result = run_spade("report", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_modules_stay_light_at_import():
    code = ("import sys, plugins.report.plugin, plugins.report, plugins.console.plugin; "
            "heavy = [m for m in ('matplotlib', 'jinja2', 'pygments', 'numpy', 'envmemory', "
            "'torch', 'rich.table') if m in sys.modules]; print(heavy)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
