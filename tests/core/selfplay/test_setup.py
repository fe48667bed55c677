"""A run's setup (spade_core.selfplay.setup): everything opened is closed, last first, a failing
close reported and passed over; every iteration's seed and timer derive from the run."""

from __future__ import annotations

from types import SimpleNamespace

from spade_core.selfplay.schedule import FrontierSchedule
from spade_core.selfplay.setup import SelfPlayRun, close_all


def test_close_all_closes_last_first_and_reports_a_failing_close():
    closed, said = [], []

    class Part:
        def __init__(self, name, fails=False):
            self.name, self.fails = name, fails

        def close(self):
            closed.append(self.name)
            if self.fails:
                raise RuntimeError("worker gone")

    close_all([Part("a"), Part("b", fails=True), Part("c")], said.append)
    assert closed == ["c", "b", "a"]  # the failure did not stop the others
    assert said == ["warning: closing Part failed: worker gone"]


def test_each_iteration_gets_its_own_seed_and_a_timer_that_reports_through_the_hooks():
    events = []
    hook = SimpleNamespace(spade_phase_progress=lambda **event: events.append(event))
    resolved = SimpleNamespace(config=SimpleNamespace(run=SimpleNamespace(seed=3)))
    run = SelfPlayRun(components=None, resolved=resolved, artifacts=None, run_info="info",
                      hook=hook)
    seeds = [run.seed(i) for i in range(3)]
    assert len(set(seeds)) == 3 and seeds[0] == 3 * 1_000_003
    other = SelfPlayRun(components=None, resolved=SimpleNamespace(
        config=SimpleNamespace(run=SimpleNamespace(seed=4))), artifacts=None, run_info="",
        hook=hook)
    assert other.seed(0) not in seeds
    with run.timer(2).phase("design", total=1):
        pass
    assert events[-1] == {"run_info": "info", "iteration": 2, "phase": "design", "completed": 0,
                          "total": 1}
    assert run.pool is None and isinstance(run.schedule, FrontierSchedule)
    assert run.opened == []
