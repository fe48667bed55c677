"""``spade bench sandbox --sandbox ray``: the same episodes through the ``ray`` sandbox and the
local ``process`` sandbox in one run, and Ray's overhead per episode and per step.

Both sandboxes get the same number of fork servers (one per CPU: ``process`` with
``workers=CPUs``; ``ray`` with one actor per CPU of a local cluster, one fork server each) and the
same work, in three shapes: the loop's (``open_many`` groups of ``--instances`` instances, one per
CPU, stepped with batched ``reset_many``/``step_many``), one episode at a time (``open``,
``reset``, 10 ``step`` calls, ``close``), and single-step round trips. Seeds and actions are the
same, so the episodes' rewards and observations must be identical (``same_episodes``).
"""

from __future__ import annotations

import hashlib
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sandbox.bench_program import BENCH_PROGRAM, EPISODE_STEPS, percentile


def _action(episode: int, step: int) -> str:
    """Varied guesses, so some episodes find the cell and rewards differ between episodes."""
    return f"\\boxed{{{(episode * 7 + step * 13) % 100}}}"


def _batched(box: Any, rounds: int, groups: int, instances: int) -> dict[str, Any]:
    digest = hashlib.sha256()
    reward = 0.0
    episodes = 0
    executor = ThreadPoolExecutor(max_workers=max(1, groups))
    started = time.monotonic()
    try:
        for r in range(rounds):
            opened = list(executor.map(lambda _: box.open_many(BENCH_PROGRAM, instances),
                                   range(groups)))
            sessions = [s for group in opened for s in group]
            base = r * len(sessions)
            for obs, _info in box.reset_many([(s, base + i) for i, s in enumerate(sessions)]):
                digest.update(obs.encode())
            for k in range(EPISODE_STEPS):
                results = box.step_many([(s, _action(base + i, k))
                                         for i, s in enumerate(sessions)])
                for result in results:
                    if not hasattr(result, "observation"):
                        raise RuntimeError(f"a benchmark step failed: {result}")
                    digest.update(result.observation.encode())
                    reward += result.reward
            list(executor.map(lambda s: s.close(), sessions))
            episodes += len(sessions)
    finally:
        executor.shutdown()
    elapsed = time.monotonic() - started
    return {"episodes": episodes, "seconds": round(elapsed, 3),
            "episodes_per_s": round(episodes / elapsed, 1),
            "ms_per_episode": round(elapsed / episodes * 1000, 3),
            "us_per_step": round(elapsed / (episodes * EPISODE_STEPS) * 1e6, 1),
            "reward_sum": reward, "digest": digest.hexdigest()[:16]}


def _one_at_a_time(box: Any, episodes: int) -> dict[str, Any]:
    digest = hashlib.sha256()
    reward = 0.0
    started = time.monotonic()
    for e in range(episodes):
        session = box.open(BENCH_PROGRAM)
        digest.update(session.reset(e)[0].encode())
        for k in range(EPISODE_STEPS):
            result = session.step(_action(e, k))
            digest.update(result.observation.encode())
            reward += result.reward
        session.close()
    elapsed = time.monotonic() - started
    return {"episodes": episodes, "seconds": round(elapsed, 3),
            "ms_per_episode": round(elapsed / episodes * 1000, 3),
            "reward_sum": reward, "digest": digest.hexdigest()[:16]}


def _latency(box: Any, steps: int) -> dict[str, Any]:
    session = box.open(BENCH_PROGRAM)
    session.reset(1)
    samples = []
    for i in range(steps):
        t0 = time.perf_counter()
        result = session.step(_action(1, i % EPISODE_STEPS))
        samples.append(time.perf_counter() - t0)
        if result.terminated or result.truncated:
            session.reset(i)
    session.close()
    return {"median_us": round(statistics.median(samples) * 1e6, 1),
            "p99_us": round(percentile(samples, 0.99) * 1e6, 1), "samples": len(samples)}


def _measure(box: Any, rounds: int, groups: int, instances: int, steps: int,
             episodes: int) -> dict[str, Any]:
    _batched(box, 1, groups, 2)  # warm-up: fork servers, actors' first calls
    return {"batched": _batched(box, rounds, groups, instances),
            "one_at_a_time": _one_at_a_time(box, episodes),
            "step_latency": _latency(box, steps)}


def measure_ray(rounds: int = 8, instances: int = 16, steps: int = 3000,
                episodes: int = 20, ray_options: dict[str, Any] | None = None
                ) -> dict[str, Any]:
    """Run the same episodes through ``process`` and ``ray``; the figures ``--json`` prints.
    ``ray_options`` override the ``ray`` sandbox's options (default: a local cluster with one
    actor per CPU)."""
    import ray

    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions, RaySandboxOptions
    from sandbox.plugin import build_ray_sandbox

    cores = os.cpu_count() or 1
    process = build_sandbox(ProcessSandboxOptions(workers=cores))
    try:
        local = _measure(process, rounds, cores, instances, steps, episodes)
    finally:
        process.close()
    started = time.monotonic()
    box = build_ray_sandbox(RaySandboxOptions(**{"num_cpus": cores, **(ray_options or {})}))
    start_seconds = time.monotonic() - started
    try:
        actors = len(box.slots)
        remote = _measure(box, rounds, cores, instances, steps, episodes)
    finally:
        box.close()

    def ratio(a: float, b: float) -> float:
        return round(a / b, 2) if b else float("inf")

    lb, rb = local["batched"], remote["batched"]
    lo, ro = local["one_at_a_time"], remote["one_at_a_time"]
    ll, rl = local["step_latency"], remote["step_latency"]
    return {
        "machine": {"cpus": cores, "python": sys.version.split()[0], "platform": sys.platform,
                    "machine": os.uname().machine, "ray": ray.__version__},
        "episode_steps": EPISODE_STEPS,
        "shape": {"rounds": rounds, "groups_per_round": cores, "instances_per_group": instances,
                  "one_at_a_time_episodes": episodes, "latency_steps": steps},
        "ray_start_seconds": round(start_seconds, 2),
        "ray_actors": actors,
        "process": local,
        "ray": remote,
        "same_episodes": (lb["digest"], lb["reward_sum"], lo["digest"], lo["reward_sum"])
        == (rb["digest"], rb["reward_sum"], ro["digest"], ro["reward_sum"]),
        "overhead": {
            "batched_ms_per_episode": round(rb["ms_per_episode"] - lb["ms_per_episode"], 3),
            "batched_us_per_step": round(rb["us_per_step"] - lb["us_per_step"], 1),
            "batched_ratio": ratio(rb["ms_per_episode"], lb["ms_per_episode"]),
            "one_at_a_time_ms_per_episode": round(ro["ms_per_episode"] - lo["ms_per_episode"],
                                                  3),
            "one_at_a_time_ratio": ratio(ro["ms_per_episode"], lo["ms_per_episode"]),
            "step_round_trip_us": round(rl["median_us"] - ll["median_us"], 1),
            "step_round_trip_ratio": ratio(rl["median_us"], ll["median_us"]),
        },
    }


def print_ray(figures: dict[str, Any]) -> None:
    """The figures as a short table."""
    shape = figures["shape"]
    print(f"sandbox benchmark, ray vs process ({figures['machine']['cpus']} CPUs, "
          f"{figures['ray_actors']} actors, Ray started in {figures['ray_start_seconds']} s)")
    for name in ("process", "ray"):
        row = figures[name]
        print(f"  {name:8} batched ({shape['rounds']} rounds x {shape['groups_per_round']} x "
              f"{shape['instances_per_group']}): {row['batched']['ms_per_episode']} ms/episode, "
              f"{row['batched']['us_per_step']} us/step; one at a time: "
              f"{row['one_at_a_time']['ms_per_episode']} ms/episode; step round trip median "
              f"{row['step_latency']['median_us']} us")
    over = figures["overhead"]
    print(f"  overhead: batched x{over['batched_ratio']} (+{over['batched_ms_per_episode']} "
          f"ms/episode), one at a time x{over['one_at_a_time_ratio']}, step round trip "
          f"x{over['step_round_trip_ratio']} (+{over['step_round_trip_us']} us)")
    print(f"  same episodes (rewards and observations): {figures['same_episodes']}")
