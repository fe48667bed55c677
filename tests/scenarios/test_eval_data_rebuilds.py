"""The positive control's bundled data files are what their README's scripts build: each script,
run from a scratch folder, writes byte for byte the files the repository ships (so the provenance
in plugins/evals/data/README.md cannot drift from the data)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from fakes.cli import ROOT

DATA = ROOT / "plugins" / "evals" / "data"


def _scripts() -> dict[str, str]:
    """The README's rebuild script of each ``sums*`` pair of files, by file stem prefix."""
    text = (DATA / "README.md").read_text(encoding="utf-8")
    found = {}
    for section in re.split(r"^# (?=`)", text, flags=re.M):  # headings name their files
        match = re.match(r"`(sums\w*)_train\.jsonl`", section)
        code = re.search(r"```python\n(.*?)```", section, re.S)
        if match and code:
            found[match.group(1)] = code.group(1)
    return found


def test_the_readme_has_both_scripts():
    assert set(_scripts()) == {"sums_pool", "sums30_pool"}


@pytest.mark.parametrize("stem", ["sums_pool", "sums30_pool"])
def test_the_script_rebuilds_the_shipped_files(stem, tmp_path):
    (tmp_path / "plugins" / "evals" / "data").mkdir(parents=True)
    subprocess.run([sys.executable, "-c", _scripts()[stem]], cwd=tmp_path, check=True,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    for part in ("train", "eval"):
        built = tmp_path / "plugins" / "evals" / "data" / f"{stem}_{part}.jsonl"
        assert built.read_bytes() == (DATA / f"{stem}_{part}.jsonl").read_bytes(), part
