"""A regeneration window's state (spade_core.selfplay.window): kept in checkpoints as a dict, and
which timeouts mark a design (when a window starts: test_schedule.py)."""

from __future__ import annotations

from spade_core.records import EnvIteration
from spade_core.selfplay.window import HeldDesign, Window, window_timeouts


def test_a_window_round_trips_through_its_dict():
    window = Window(start=4, env_ids=["a", "b"], designs=[
        HeldDesign(env_id="a", family_name="fake-qa", messages=[{"role": "user", "content": "x"}],
                   skill="sums", rollout_logps=[-0.5, -1.0], meta={"k": 1})])
    data = window.to_dict()
    assert data["designs"][0]["rollout_logps"] == [-0.5, -1.0]
    assert Window.from_dict(data) == window
    assert window.offset(6) == 2


def test_timeouts_counted_at_the_start_or_over_the_window():
    plays = [EnvIteration(iteration=2, figures={"step_timeouts": 1.0}),
             EnvIteration(iteration=3, figures={"step_timeouts": 2.0})]
    assert window_timeouts(plays, 2) == 1  # the reference: the window's first iteration only
    assert window_timeouts(plays, 2, "window") == 3
    assert window_timeouts([EnvIteration(iteration=2)], 2) == 0
