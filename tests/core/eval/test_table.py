"""spade_core/eval/table.py: the scores table and a suite's notes under it."""

from __future__ import annotations

from spade_core.eval.scores import summarise
from spade_core.eval.table import table


def test_table_prints_a_suites_notes():
    from spade_core.interfaces import EvalItem

    result = summarise("acebench", [EvalItem(id="0", bucket="agent")], [[1]], k=1, threshold=1.0)
    result.notes = {"agent_scoring": "process accuracy (scenario code absent)",
                    "agent_process_accuracy": 0.25}
    lines = table([result]).splitlines()
    assert "acebench: agent_scoring: process accuracy (scenario code absent)" in lines
    assert "acebench: agent_process_accuracy: 25.0" in lines
