"""The benchmark environment: a 10-step hot/cold search that the benchmark's fixed actions never
win, and its nearest-rank percentile."""

from __future__ import annotations

from fakes.restricted import run_restricted

from sandbox.bench_program import ACTIONS, BENCH_PROGRAM, EPISODE_STEPS, percentile


def test_the_benchmark_actions_play_a_whole_episode_without_winning():
    env = run_restricted(BENCH_PROGRAM)["HotColdEnv"]()  # accepted by the compile policy
    observation, info = env.reset(7)
    assert "hidden" in observation and info == {"max_steps": EPISODE_STEPS}
    results = [env.step(action) for action in ACTIONS]
    assert [r[1] for r in results] == [0.0] * EPISODE_STEPS
    assert [r[2] for r in results] == [False] * (EPISODE_STEPS - 1) + [True]
    env.reset(7)
    assert env.step(env.solution())[:3] == ("Found it!", 1.0, True)


def test_percentile_is_the_nearest_rank():
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 0.5) == 3.0
    assert percentile(values, 0.0) == 1.0 and percentile(values, 0.99) == 5.0
