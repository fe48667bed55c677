"""``spade bench sandbox``: the subcommand, its JSON figures for the three approaches, and the
multi-instance measurement."""

from __future__ import annotations

import json

import pytest

from fakes.cli import run_spade as spade


@pytest.mark.timeout(60)
def test_bench_sandbox_is_a_subcommand():
    out = spade("bench", "sandbox", "--help", timeout=60)
    assert out.returncode == 0
    assert "--json" in out.stdout and "spade bench sandbox" in out.stdout
    import sandbox.plugin
    from spade_core.testing import load_test_plugins
    from spade_core.cli import load_commands

    commands = load_commands(load_test_plugins(sandbox.plugin))
    assert commands.commands["bench sandbox"].plugin == "sandbox.plugin"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_bench_sandbox_json_reports_all_three_approaches():
    out = spade("bench", "sandbox", "--json", "--seconds", "0.5", "--steps", "200",
                "--fresh-episodes", "2", timeout=300)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert figures["isolated"]["single_stream"]["episodes"] > 0
    assert figures["plain_exec"]["episodes_per_s"] > figures["fresh_interpreter"]["episodes_per_s"]
    assert set(figures["goals"]) == {"episodes_per_s_per_core", "step_median_us"}
    assert all(isinstance(g["met"], bool) for g in figures["goals"].values())


def test_the_benchmark_measures_multi_instance_workers():
    from sandbox.sandbox_bench import _multi_instance_throughput

    figures = _multi_instance_throughput(0.2, 1, 4)
    assert figures["episodes"] > 0 and figures["episodes"] % 4 == 0
    assert figures["instances_per_worker"] == 4 and figures["batched_steps"] is True
    assert figures["step_many_median_us"] > 0
