"""Sandbox throughput and latency: isolated workers vs plain exec vs a fresh interpreter.

All three run the same multi-turn environment (10 steps per episode). Isolated: one fork-server
worker per episode under the full isolation in force; multi-instance: one worker hosting
``--instances`` instances (``open_many``), stepped with batched ``step_many`` calls. Plain exec:
the program exec'd in this process, as the SPADE reference does (no isolation at all). Fresh
interpreter: one
``python -I`` process per episode, as human-eval does. Figures are wall-clock on whatever else the
machine is doing; per-core figures divide by the CPU seconds all processes used.

``--sandbox ray`` instead runs the same episodes (same programs, seeds and actions) through the
``ray`` sandbox (a local Ray cluster, one actor per CPU) and through the local ``process``
sandbox (one fork server per CPU) in one run, side by side, and reports Ray's overhead per
episode and per step as differences and ratios (``ray_bench.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from sandbox.bench_program import ACTIONS, BENCH_PROGRAM, EPISODE_STEPS, percentile

_FRESH_DRIVER = r'''
import sys
source = sys.stdin.read()
namespace = {"__name__": "__env__"}
exec(compile(source, "<env>", "exec"), namespace)
env = namespace["HotColdEnv"]()
env.reset(seed=int(sys.argv[1]))
for i in range(10):
    env.step("\\boxed{%d}" % (200 + i))
print("done")
'''


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="how long to run each throughput measurement (default 3)")
    parser.add_argument("--steps", type=int, default=3000,
                        help="step round trips to time for the latency figures (default 3000)")
    parser.add_argument("--fresh-episodes", type=int, default=20,
                        help="episodes for the fresh-interpreter approach; with --sandbox ray, "
                        "episodes one at a time (default 20)")
    parser.add_argument("--instances", type=int, default=16,
                        help="environment instances per worker for the multi-instance figures "
                        "(open_many + batched reset_many/step_many; default 16)")
    parser.add_argument("--sandbox", choices=("process", "ray"), default="process",
                        help="'ray': the same episodes through the ray sandbox and the local "
                        "process sandbox, side by side (needs the ray extra)")
    parser.add_argument("--rounds", type=int, default=8,
                        help="with --sandbox ray: batched rounds (each one group of --instances "
                        "episodes per CPU) per sandbox (default 8)")


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _isolated_throughput(seconds: float, streams: int) -> dict[str, Any]:
    """Episodes/s with ``streams`` concurrent clients on ``streams`` fork servers, and the CPU
    seconds every process involved (this one, the servers, the workers) spent per episode."""
    from concurrent.futures import ThreadPoolExecutor

    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    sandbox = build_sandbox(ProcessSandboxOptions(workers=streams))
    counts = [0] * streams

    def client(index: int) -> None:
        end = time.monotonic() + seconds
        seed = index * 1_000_000
        while time.monotonic() < end:
            session = sandbox.open(BENCH_PROGRAM)
            session.reset(seed)
            for action in ACTIONS:
                session.step(action)
            session.close()
            counts[index] += 1
            seed += 1

    try:
        time.sleep(0.2)  # let the last start-up work settle before counting CPU
        cpu_before = _cpu_self() + sandbox.executor.cpu_seconds()
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=streams) as clients:
            list(clients.map(client, range(streams)))
        elapsed = time.monotonic() - started
        time.sleep(0.2)  # the last workers exit and are reaped
        cpu = _cpu_self() + sandbox.executor.cpu_seconds() - cpu_before
    finally:
        sandbox.close()
    episodes = sum(counts)
    return {"streams": streams, "episodes": episodes, "seconds": round(elapsed, 3),
            "episodes_per_s": round(episodes / elapsed, 1),
            "cpu_seconds": round(cpu, 3),
            "cpu_ms_per_episode": round(cpu / episodes * 1000, 2) if episodes else None,
            "episodes_per_cpu_s": round(episodes / cpu, 1) if cpu > 0 else None}


def _multi_instance_throughput(seconds: float, workers: int, instances: int,
                               batched: bool = True) -> dict[str, Any]:
    """Episodes/s with ``workers`` workers at a time, each hosting ``instances`` instances
    (``open_many``), stepped in lock step with ``step_many`` (one request frame per worker, the
    workers served concurrently) or, with ``batched=False``, one ``step`` call per instance."""
    from concurrent.futures import ThreadPoolExecutor

    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    sandbox = build_sandbox(ProcessSandboxOptions(workers=workers))
    episodes = 0
    batch_seconds: list[float] = []
    openers = ThreadPoolExecutor(max_workers=workers)
    try:
        time.sleep(0.2)
        cpu_before = _cpu_self() + sandbox.executor.cpu_seconds()
        started = time.monotonic()
        end = started + seconds
        seed = 0
        while time.monotonic() < end:
            groups = list(openers.map(lambda _: sandbox.open_many(BENCH_PROGRAM, instances),
                                   range(workers)))
            sessions = [s for group in groups for s in group]
            sandbox.reset_many([(s, seed + i) for i, s in enumerate(sessions)])
            seed += len(sessions)
            for action in ACTIONS:
                if batched:
                    t0 = time.perf_counter()
                    results = sandbox.step_many([(s, action) for s in sessions])
                    batch_seconds.append(time.perf_counter() - t0)
                else:
                    results = [s.step(action) for s in sessions]
                if any(not hasattr(r, "observation") for r in results):
                    raise RuntimeError(f"a benchmark step failed: {results}")
            for s in sessions:
                s.close()
            episodes += len(sessions)
        elapsed = time.monotonic() - started
        time.sleep(0.2)
        cpu = _cpu_self() + sandbox.executor.cpu_seconds() - cpu_before
    finally:
        openers.shutdown()
        sandbox.close()
    figures = {"workers": workers, "instances_per_worker": instances,
               "batched_steps": batched, "episodes": episodes, "seconds": round(elapsed, 3),
               "episodes_per_s": round(episodes / elapsed, 1),
               "cpu_seconds": round(cpu, 3),
               "cpu_ms_per_episode": round(cpu / episodes * 1000, 3) if episodes else None,
               "episodes_per_cpu_s": round(episodes / cpu, 1) if cpu > 0 else None}
    if batch_seconds:
        figures["step_many_median_us"] = round(statistics.median(batch_seconds) * 1e6, 1)
        figures["step_many_steps"] = workers * instances
    return figures


def _isolated_latency(steps: int) -> dict[str, Any]:
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    sandbox = build_sandbox(ProcessSandboxOptions(workers=1))
    samples: list[float] = []
    try:
        session = sandbox.open(BENCH_PROGRAM)
        session.reset(1)
        for i in range(steps):
            action = ACTIONS[i % EPISODE_STEPS]
            t0 = time.perf_counter()
            result = session.step(action)
            samples.append(time.perf_counter() - t0)
            if result.terminated or result.truncated:
                session.reset(i)
        session.close()
    finally:
        sandbox.close()
    return {"median_us": round(statistics.median(samples) * 1e6, 1),
            "p99_us": round(percentile(samples, 0.99) * 1e6, 1), "samples": len(samples)}


def _plain_exec(seconds: float, steps: int) -> dict[str, Any]:
    """The reference's way: exec in this process, no isolation, no restrictions."""
    code = compile(BENCH_PROGRAM, "<env>", "exec")
    episodes = 0
    end = time.monotonic() + seconds
    started = time.monotonic()
    cpu_before = _cpu_self()
    while time.monotonic() < end:
        namespace: dict[str, Any] = {"__name__": "__env__"}
        exec(code, namespace)  # noqa: S102 - the unsafe baseline being measured
        env = namespace["HotColdEnv"]()
        env.reset(seed=episodes)
        for action in ACTIONS:
            env.step(action)
        episodes += 1
    elapsed = time.monotonic() - started
    cpu = _cpu_self() - cpu_before
    env = namespace["HotColdEnv"]()
    env.reset(seed=1)
    samples = []
    for i in range(steps):
        t0 = time.perf_counter()
        _, _, done, _, _ = env.step(ACTIONS[i % EPISODE_STEPS])
        samples.append(time.perf_counter() - t0)
        if done:
            env.reset(seed=i)
    return {"episodes": episodes, "episodes_per_s": round(episodes / elapsed, 1),
            "episodes_per_cpu_s": round(episodes / cpu, 1) if cpu > 0 else None,
            "step_median_us": round(statistics.median(samples) * 1e6, 2),
            "step_p99_us": round(percentile(samples, 0.99) * 1e6, 2)}


def _fresh_interpreter(episodes: int) -> dict[str, Any]:
    """human-eval's way: a new interpreter per episode (no OS isolation added)."""
    cpu_before = _cpu_children()
    started = time.monotonic()
    for i in range(episodes):
        subprocess.run([sys.executable, "-I", "-c", _FRESH_DRIVER, str(i)],
                       input=BENCH_PROGRAM, text=True, capture_output=True, check=True,
                       timeout=60)
    elapsed = time.monotonic() - started
    cpu = _cpu_children() - cpu_before
    return {"episodes": episodes, "episodes_per_s": round(episodes / elapsed, 1),
            "episodes_per_cpu_s": round(episodes / cpu, 1) if cpu > 0 else None}


def measure(seconds: float = 3.0, steps: int = 3000, fresh_episodes: int = 20,
            instances: int = 16) -> dict[str, Any]:
    """Run all measurements and return the figures (what ``--json`` prints)."""
    from sandbox.isolation import choose

    launch = choose("auto")
    single = _isolated_throughput(seconds, 1)
    cores = os.cpu_count() or 1
    multi = _isolated_throughput(seconds, cores) if cores > 1 else single
    many = {
        "single_stream": _multi_instance_throughput(seconds, 1, instances),
        "all_cores": _multi_instance_throughput(seconds, cores, instances),
        "single_stream_unbatched_steps": _multi_instance_throughput(seconds, 1, instances,
                                                                    batched=False),
    }
    many_per_core = many["single_stream"]["episodes_per_cpu_s"] or 0.0
    many["goal_episodes_per_s_per_core"] = {"goal": 300, "measured": many_per_core,
                                            "met": many_per_core >= 300}
    latency = _isolated_latency(steps)
    plain = _plain_exec(seconds, steps)
    fresh = _fresh_interpreter(fresh_episodes)
    per_core = single["episodes_per_cpu_s"] or 0.0
    return {
        "machine": {"cpus": cores, "python": sys.version.split()[0],
                    "platform": sys.platform, "machine": os.uname().machine},
        "isolation": launch.method,
        "episode_steps": EPISODE_STEPS,
        "isolated": {"single_stream": single, "all_cores": multi, "step_latency": latency},
        "multi_instance": many,
        "plain_exec": plain,
        "fresh_interpreter": fresh,
        "ratios": {
            "plain_exec_vs_isolated_episodes": round(
                plain["episodes_per_s"] / single["episodes_per_s"], 1),
            "isolated_vs_fresh_interpreter_episodes": round(
                single["episodes_per_s"] / fresh["episodes_per_s"], 1),
            "isolated_vs_plain_step_latency": round(
                latency["median_us"] / max(plain["step_median_us"], 1e-3), 1),
            "multi_instance_vs_one_per_worker_episodes_per_cpu_s": round(
                many_per_core / max(single["episodes_per_cpu_s"] or 0.0, 1e-3), 1),
        },
        "goals": {
            "episodes_per_s_per_core": {"goal": 300, "measured": per_core,
                                        "met": per_core >= 300},
            "step_median_us": {"goal": 50, "measured": latency["median_us"],
                               "met": latency["median_us"] <= 50},
        },
    }


def run(args: argparse.Namespace) -> int:
    from spade_core.errors import UsageError

    instances = getattr(args, "instances", 16)
    if args.seconds <= 0 or args.steps < 10 or args.fresh_episodes < 1 \
            or not 1 <= instances <= 1024:
        raise UsageError("bench sandbox: --seconds must be > 0, --steps >= 10, "
                         "--fresh-episodes >= 1, --instances from 1 to 1024")
    if getattr(args, "sandbox", "process") == "ray":
        from sandbox.ray_bench import measure_ray, print_ray

        if args.rounds < 1:
            raise UsageError("bench sandbox: --rounds must be >= 1")
        figures = measure_ray(args.rounds, instances, args.steps, args.fresh_episodes)
        if args.json:
            print(json.dumps(figures, indent=2))
        else:
            print_ray(figures)
        return 0
    figures = measure(args.seconds, args.steps, args.fresh_episodes, instances)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    iso = figures["isolated"]
    print(f"sandbox benchmark ({figures['isolation']} isolation, {figures['machine']['cpus']} "
          f"CPUs, {EPISODE_STEPS}-step episodes)")
    print(f"  isolated, 1 stream:   {iso['single_stream']['episodes_per_s']:>8} episodes/s  "
          f"({iso['single_stream']['episodes_per_cpu_s']} per CPU-second)")
    print(f"  isolated, all cores:  {iso['all_cores']['episodes_per_s']:>8} episodes/s")
    print(f"  isolated step:        median {iso['step_latency']['median_us']} us, "
          f"p99 {iso['step_latency']['p99_us']} us")
    for name, row in figures["multi_instance"].items():
        if "instances_per_worker" not in row:
            continue
        label = f"{row['instances_per_worker']}/worker, {name.replace('_', ' ')}"
        print(f"  {label}: {row['episodes_per_s']} episodes/s "
              f"({row['episodes_per_cpu_s']} per CPU-second)")
    plain, fresh = figures["plain_exec"], figures["fresh_interpreter"]
    print(f"  plain exec:           {plain['episodes_per_s']:>8} episodes/s, step median "
          f"{plain['step_median_us']} us")
    print(f"  fresh interpreter:    {fresh['episodes_per_s']:>8} episodes/s")
    goals = dict(figures["goals"])
    goals["episodes_per_s_per_core (multi-instance)"] = \
        figures["multi_instance"]["goal_episodes_per_s_per_core"]
    for name, goal in goals.items():
        print(f"  goal {name}: {goal['goal']} -> measured {goal['measured']} "
              f"({'met' if goal['met'] else 'NOT met'})")
    return 0
