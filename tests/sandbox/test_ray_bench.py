"""``spade bench sandbox --sandbox ray``: the same episodes through ``ray`` and ``process``, with
Ray's overhead, on the folder's local cluster."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")
# One Ray cluster at a time under pytest-xdist (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("ray")


@pytest.mark.slow
def test_the_benchmark_runs_the_same_episodes_through_both(cluster):
    from sandbox.ray_bench import measure_ray

    # The ray sandbox tests' actors may hold the cluster's 2 CPUs: these actors reserve none.
    figures = measure_ray(rounds=1, instances=2, steps=20, episodes=2,
                          ray_options={"cpus_per_actor": 0})
    assert figures["same_episodes"] is True
    assert figures["ray"]["batched"]["episodes"] == figures["process"]["batched"]["episodes"]
    assert set(figures["overhead"]) >= {"batched_ratio", "batched_us_per_step",
                                        "step_round_trip_ratio", "one_at_a_time_ratio"}
    assert ray.is_initialized()  # the benchmark used the connected cluster and left it up
