"""spade_core/cli/run_cmd.py: ``spade run``'s help names what a resume may change; a finished run
points at ``spade report``."""

from __future__ import annotations

from fakes.cli import ROOT
from fakes.commands import help_text as _help


def test_a_finished_run_points_at_spade_report(tmp_path, capsys):
    from spade_core.cli.run_cmd import _suggest_report
    from spade_core.plugins import load_plugins
    from spade_core.testing import load_test_plugins

    _suggest_report(load_plugins(), tmp_path)
    hint = f"spade: see the run as one HTML page: spade report {tmp_path}\n"
    assert capsys.readouterr().err == hint
    _suggest_report(load_test_plugins(), tmp_path)  # no report plugin: no hint
    assert capsys.readouterr().err == ""


def test_run_help_and_the_docs_name_every_key_a_resume_may_change():
    from spade_core.config.resume import RESUMABLE_CHANGES

    text = " ".join(_help(["run"]).split())
    assert f"except {', '.join(RESUMABLE_CHANGES)}" in text
    docs = (ROOT / "docs" / "cli.md").read_text()
    [row] = [line for line in docs.splitlines() if "--resume RUN_DIR` |" in line]
    assert all(f"`{key}`" in row for key in RESUMABLE_CHANGES)
