"""A run directory read for the report: every file of a finished run, and its figures as numbers."""

from __future__ import annotations

from plugins.report.rundata import load_run

from fakes.report_runs import env_details as _envs


def test_load_run_reads_every_file(finished_run):
    data = load_run(finished_run)
    assert data.status == "completed" and not data.warnings
    assert [m["iteration"] for m in data.metrics] == [0, 1]
    assert {e.id for e in data.envs} == set(_envs(finished_run))
    assert data.families == ["fake-qa", "fake-riddle"]
    assert set(data.statuses) == {"frontier", "mastered", "too_hard", "duplicate", "rejected"}
    frontier = next(e for e in data.envs if e.status == "frontier")
    assert frontier.regret == 1.0 and frontier.success_unhinted == 0.0
    assert frontier.success_hinted == 1.0 and "class QAEnv" in frontier.source
