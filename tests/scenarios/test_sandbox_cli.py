"""``spade check-env`` and ``spade doctor`` end to end, through the real sandbox: the verdict
corpus's categories, output format, exit codes, and the isolation in force."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).parents[1] / "sandbox" / "corpus"
VERDICTS = sorted((CORPUS / "verdicts").glob("*.py"))


def spade(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spade_core.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


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


@pytest.mark.timeout(120)
def test_doctor_reports_the_isolation_in_force():
    out = spade("doctor", "--json", timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["healthy"] is True
    assert report["isolation"]["isolated"] is True
    assert report["probe"]["category"] == "ok"

