"""spade_core/experiment/outcomes.py: a run that ended elsewhere is reported with its last lines
and handed to ``after_run``; a run that failed is reported and its error returned, not raised,
so the driver lets the other runs finish first."""

from __future__ import annotations

from pathlib import Path

from spade_core.experiment.outcomes import run_ended
from spade_core.experiment.plan import PlannedRun

RUN = PlannedRun(arm="spade", seed=3, dir=Path("/nowhere"), config={})


def test_a_finished_run_is_reported_with_its_lines_and_handed_on():
    lines: list[str] = []
    ended: list[tuple[str, str]] = []
    error = run_ended(RUN, lambda: ("fresh", ["iteration 0", "iteration 1"]), lines.append,
                      lambda run, state: ended.append((run.label, state)))
    assert error is None
    assert lines[:2] == [f"  [{RUN.label}] iteration 0", f"  [{RUN.label}] iteration 1"]
    assert lines[-1] == f"spade experiment: {RUN.label}: fresh -> finished"
    assert ended == [(RUN.label, "fresh")]


def test_a_failed_run_is_reported_and_its_error_returned():
    lines: list[str] = []

    def outcome():
        raise RuntimeError("out of memory")

    error = run_ended(RUN, outcome, lines.append, lambda run, state: lines.append("called"))
    assert isinstance(error, RuntimeError)
    assert lines == [f"spade experiment: {RUN.label} failed: out of memory"]
