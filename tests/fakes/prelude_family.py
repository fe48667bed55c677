"""A fake family carrying an arbitrary (often hostile) trusted prelude, and a program that reports
what its prelude left in ``RESULTS``: a hostile prelude stands in for a complete escape from the
language filter, since a prelude runs unrestricted inside the worker."""

from __future__ import annotations

from fakes.in_process import FakePartialFamily

REPORT_PROGRAM = '''
import json
class ReportEnv:
    def reset(self, seed=None):
        return json.dumps(RESULTS), {}
    def step(self, action):
        return "done", 1.0, True, False, {}
    def solution(self):
        return "x"
'''


class PreludeFamily(FakePartialFamily):
    """A fake family carrying an arbitrary (here: hostile) prelude."""

    name = "fake"

    def __init__(self, prelude: str) -> None:
        self.prelude = prelude

    def solution_actions(self, solution, tools=None):
        return [solution] if isinstance(solution, str) else None
