"""spade_core/cli/seeds_cmd.py: ``spade seeds FAMILY --out PATH`` writes the family's seed
programs, one .py file each or one JSONL line each, and keeps existing files unless --force."""

from __future__ import annotations

import json

import pytest

from spade_core.cli import main
from spade_core.cli.seeds_cmd import file_stem
from spade_core.plugins import load_plugins


@pytest.fixture(scope="module")
def seeds():
    family = load_plugins().registry.build("env_family", "reasoning", {}, "family")
    return list(family.seed_programs())


def test_one_python_file_per_seed_program(tmp_path, seeds, capsys):
    out = tmp_path / "pool"
    assert main(["seeds", "reasoning", "--out", str(out)]) == 0
    files = sorted(out.glob("*.py"))
    assert len(files) == len(seeds) > 0
    assert {f.read_text() for f in files} == {p.source for p in seeds}
    assert str(files[0]) in capsys.readouterr().out
    files[0].write_text("# mine\n")
    assert main(["seeds", "reasoning", "--out", str(out)]) == 0
    assert files[0].read_text() == "# mine\n" and "exists, kept" in capsys.readouterr().err
    assert main(["seeds", "reasoning", "--out", str(out), "--force"]) == 0
    assert files[0].read_text() != "# mine\n"


def test_one_jsonl_line_per_seed_program(tmp_path, seeds):
    out = tmp_path / "pool.jsonl"
    assert main(["seeds", "reasoning", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["code"] for r in rows] == [p.source for p in seeds]
    assert {r["family"] for r in rows} == {"reasoning"}
    assert all(r["description"] for r in rows)
    assert main(["seeds", "reasoning", "--out", str(out)]) == 2  # exists: --force to replace
    assert main(["seeds", "reasoning", "--out", str(out), "--force"]) == 0


def test_file_names_come_from_the_description():
    assert file_stem("leg_counting: how many legs", "seed_0") == "leg_counting"
    assert file_stem("Sum Two / Numbers!: x", "seed_0") == "sum_two_numbers"
    assert file_stem(":::", "seed_3") == "seed_3"
