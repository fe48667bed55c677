"""``spade check-env`` and ``spade bench sandbox``: verdict categories, output format, exit codes,
plugin registration and light imports."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "corpus"
VERDICTS = sorted((CORPUS / "verdicts").glob("*.py"))


def spade(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spade_core.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_the_sandbox_plugin_is_registered_with_options():
    from spade_core.plugins import load_plugins

    component = load_plugins().registry.resolve("sandbox", "process", "sandbox")
    options = component.options()
    assert options.workers >= 1 and options.allow_unisolated is False
    with pytest.raises(Exception, match="extra"):
        component.options.model_validate({"no_such_option": 1})


def test_cli_stays_light():
    code = ("import sys, argparse; import sandbox.plugin, sandbox.bench; "
            "from spade_core.cli import check_env_cmd, bench_cmd, doctor_cmd; "
            "sub = argparse.ArgumentParser().add_subparsers(); "
            "check_env_cmd.add_parser(sub); bench_cmd.add_parser(sub); doctor_cmd.add_parser(sub); "
            "heavy = [m for m in ('RestrictedPython', 'torch', 'gymnasium', 'numpy') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.timeout(300)
def test_check_env_reports_every_category_as_json_lines():
    result = spade("check-env", "--json", "--workers", "2", *map(str, VERDICTS))
    assert result.returncode == 1, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [Path(r["file"]).name for r in rows] == [p.name for p in VERDICTS]
    for row, path in zip(rows, VERDICTS):
        want = re.search(r"^# expect: (\w+)", path.read_text(), re.M).group(1)
        assert row["category"] == want, (path.name, row)
        assert row["valid"] is (want == "ok")
        assert set(row) >= {"file", "valid", "category", "message", "observation", "seconds"}
        assert len(row["observation"]) <= 2048
        assert row["isolation"] in ("bwrap", "unshare", "none")
    syntax = next(r for r in rows if r["category"] == "syntax")
    assert syntax["line"] == 3


@pytest.mark.timeout(120)
def test_check_env_exit_codes_and_text_output(tmp_path):
    good = CORPUS / "benign" / "guess_number.py"
    ok = spade("check-env", str(good))
    assert ok.returncode == 0, ok.stderr
    assert "guess_number.py: ok" in ok.stdout
    assert "isolation" in ok.stderr
    missing = spade("check-env", str(tmp_path / "nope.py"))
    assert missing.returncode == 2
    assert "no such file" in missing.stderr
    none = spade("check-env")
    assert none.returncode == 2
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00")
    bad = spade("check-env", "--json", str(good), str(binary))
    assert bad.returncode == 1
    assert [json.loads(line)["valid"] for line in bad.stdout.splitlines()] == [True, False]


@pytest.mark.timeout(60)
def test_bench_sandbox_is_a_subcommand():
    out = spade("bench", "sandbox", "--help", timeout=60)
    assert out.returncode == 0
    assert "--json" in out.stdout and "spade bench sandbox" in out.stdout
    import sandbox.plugin
    from spade_core.testing import load_test_plugins
    from spade_core.cli import load_commands

    commands = load_commands(load_test_plugins(sandbox.plugin))
    assert commands.commands["bench sandbox"].plugin == "sandbox.plugin"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_bench_sandbox_json_reports_all_three_approaches():
    out = spade("bench", "sandbox", "--json", "--seconds", "0.5", "--steps", "200",
                "--fresh-episodes", "2", timeout=300)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert figures["isolated"]["single_stream"]["episodes"] > 0
    assert figures["plain_exec"]["episodes_per_s"] > figures["fresh_interpreter"]["episodes_per_s"]
    assert set(figures["goals"]) == {"episodes_per_s_per_core", "step_median_us"}
    assert all(isinstance(g["met"], bool) for g in figures["goals"].values())


@pytest.mark.timeout(120)
def test_doctor_reports_the_isolation_in_force():
    out = spade("doctor", "--json", timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["healthy"] is True
    assert report["isolation"]["isolated"] is True
    assert report["probe"]["category"] == "ok"
