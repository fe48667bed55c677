"""spade_core/cli/check_env_cmd.py: ``spade check-env`` without --family on folders and JSONL files
(issue 17)."""

from __future__ import annotations

import subprocess

import pytest

from fakes.cli import ROOT, run_spade


SEEDS = ROOT / "plugins" / "families" / "seeds"


def _rows(result: subprocess.CompletedProcess) -> list[dict]:
    import json

    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.timeout(300)
def test_check_env_chooses_the_family_of_each_program(tmp_path):
    import shutil

    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(SEEDS / "reasoning" / "modular_power.py", folder)  # uses extract_boxed
    shutil.copy(SEEDS / "tool_use" / "bank_rebalance.py", folder)  # subclasses ToolUseBaseEnv
    shutil.copy(ROOT / "tests" / "sandbox" / "corpus" / "benign" / "guess_number.py", folder)
    result = run_spade("check-env", "--json", "--workers", "1", str(folder), timeout=240)
    assert result.returncode == 0, result.stderr + result.stdout
    families = {r["file"].rsplit("/", 1)[-1]: r["family"] for r in _rows(result)}
    assert families == {"bank_rebalance.py": "tool-use", "guess_number.py": None,
                        "modular_power.py": "reasoning"}


@pytest.mark.timeout(300)
def test_check_env_finds_every_seed_valid_without_family():
    """Issue 48: the project's own seeds are valid without --family; fraction_sum.py imports
    math_verify and code_breaker.py gives its solution in the reasoning family's format, so the
    plain SPADE game format refuses both and the reasoning family is chosen; package files are
    no programs."""
    result = run_spade("check-env", "--json", "--workers", "1", str(SEEDS), timeout=280)
    rows = _rows(result)
    assert result.returncode == 0, [r for r in rows if not r["valid"]] or result.stderr
    names = {r["file"].rsplit("/", 1)[-1]: r["family"] for r in rows}
    expected = {p.name for p in SEEDS.rglob("*.py") if p.name != "__init__.py"}
    assert set(names) == expected and len(rows) == len(expected)
    assert names["fraction_sum.py"] == names["code_breaker.py"] == "reasoning"
    assert names["bank_rebalance.py"] == "tool-use"


@pytest.mark.timeout(300)
def test_check_env_reads_jsonl_and_names_a_family_that_refuses(tmp_path):
    import json

    good = (SEEDS / "reasoning" / "modular_power.py").read_text()
    # uses the tool-use family's base class but defines no environment class of it
    bad = "class Helper(ToolUseBaseEnv):\n    pass\n"
    jsonl = tmp_path / "programs.jsonl"
    jsonl.write_text(json.dumps({"code": good}) + "\n" + json.dumps({"code": bad}) + "\n")
    result = run_spade("check-env", "--json", "--workers", "1", str(jsonl), timeout=240)
    assert result.returncode == 1, result.stderr
    rows = _rows(result)
    assert [r["file"] for r in rows] == [f"{jsonl}:1", f"{jsonl}:2"]
    assert rows[0]["valid"] and rows[0]["family"] == "reasoning"
    assert not rows[1]["valid"] and rows[1]["category"] == "interface"
    assert "family 'tool-use'" in rows[1]["message"] and "--family" in rows[1]["message"]


def test_check_env_missing_path_and_empty_folder(tmp_path):
    missing = run_spade("check-env", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    empty = run_spade("check-env", str(tmp_path))
    assert empty.returncode == 2 and "no programs found" in empty.stderr
