"""What the driver does when a run that ran elsewhere (a local worker process, a Ray task) ends:
its last progress lines and its state reported and ``after_run`` called, or its error reported
and handed back, to be raised once the other runs ended."""

from __future__ import annotations

from collections.abc import Callable

from spade_core.experiment.plan import PlannedRun


def run_ended(run: PlannedRun, outcome: Callable[[], tuple[str, list[str]]],
              report: Callable[[str], None],
              after_run: Callable[[PlannedRun, str], None] | None) -> Exception | None:
    """Report ``run``'s end: ``outcome()`` gives what it did and its last lines, or raises
    its error, which is reported and returned."""
    try:
        state, lines = outcome()
    except Exception as exc:  # noqa: BLE001 - report it, let the other runs finish
        report(f"spade experiment: {run.label} failed: {exc}")
        return exc
    for line in lines:
        report(f"  [{run.label}] {line}")
    report(f"spade experiment: {run.label}: {state} -> finished")
    if after_run is not None:
        after_run(run, state)
    return None
