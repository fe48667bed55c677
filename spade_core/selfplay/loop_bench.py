"""Orchestration overhead of the self-play loop ('spade bench loop').

Runs validate, dedupe, hint, rollouts and estimate with the configured sandbox, memory, families
and estimator, but with a zero-latency scripted policy in place of the model (a test double: the
designer "writes" the families' seed programs, hints are fixed text, the agent replays a fixed
action). What is left is the loop's own cost: environments per second through the pipeline.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spade_core.interfaces import Generation, GenerationBackend

DEFAULT_CONFIG = "configs/quickstart.yaml"
#: Phases the goal counts, as the issue defines it (``remember``: the memory update, timed
#: within ``estimate`` when the goal was set).
PIPELINE = ("validate", "hint", "rollout", "estimate", "remember")


class ScriptedPolicy(GenerationBackend):
    """Zero-latency stand-in for the model: replays fixed programs, hints and actions."""

    def __init__(self, programs: Sequence[str], action: str = "\\boxed{0}",
                 latency: float = 0.0) -> None:
        self.programs = list(programs)
        #: Seconds each call takes (a stand-in for the model's time; sleeps, as a GPU wait does).
        self.latency = latency
        self.action = action
        self.next_program = 0

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        if self.latency:
            time.sleep(self.latency)
        out = []
        for messages in conversations:
            system = messages[0]["content"] if messages else ""
            if system.startswith("You are an environment designer"):
                program = self.programs[self.next_program % len(self.programs)]
                self.next_program += 1
                out.append(Generation(text=f"```python\n{program}\n```"))
            elif system.startswith("You are a coach"):
                out.append(Generation(text="Work step by step and box the final answer."))
            else:
                out.append(Generation(text=self.action))
        return out

    def close(self) -> None:
        return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=DEFAULT_CONFIG,
                        help="config whose sandbox, memory, families and estimator are used")
    parser.add_argument("--envs", type=int, default=64, help="environments through the pipeline")
    parser.add_argument("--rollouts", type=int, default=8, help="hinted and unhinted plays each")
    parser.add_argument("--turns", type=int, default=2, help="turns per episode")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--async-level", type=int, default=None, metavar="K",
                        help="instead: run --iterations whole iterations with loop.async_level "
                        "K, the scripted policy taking --generate-seconds per call and a "
                        "stand-in trainer --train-seconds per update; report both sides' busy "
                        "and idle seconds")
    parser.add_argument("--iterations", type=int, default=4, help="with --async-level")
    parser.add_argument("--generate-seconds", type=float, default=0.05,
                        help="with --async-level: seconds per generation call")
    parser.add_argument("--train-seconds", type=float, default=2.0,
                        help="with --async-level: seconds per update")


class SleepingTrainer:
    """A stand-in trainer for ``--async-level``: each update takes ``seconds`` (asleep, releasing
    the interpreter as torch's kernels do) and changes nothing."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def train(self, samples: Any) -> dict[str, float]:
        time.sleep(self.seconds)
        return {"samples": float(len(samples))}

    def record_logprobs(self, samples: Any) -> None:
        return None

    def save(self, directory: Path) -> None:
        return None

    def load(self, directory: Path) -> None:
        return None

    def close(self) -> None:
        return None


def run_pipeline(args: argparse.Namespace) -> dict[str, Any]:
    """``--async-level K``: whole iterations through the run loop; both sides' time."""
    from spade_core.config.load import load_config
    from spade_core.plugins import load_plugins
    from spade_core.selfplay.run_loop import run as run_loop

    loaded = load_plugins()
    with tempfile.TemporaryDirectory(prefix="spade-bench-async-") as tmp:
        overrides = [f"loop.envs_per_iteration={args.envs}",
                     f"loop.rollouts_per_env={args.rollouts}", f"loop.max_turns={args.turns}",
                     "loop.max_attempts=1", "designer=full-program", "trainer=none",
                     "loop.schedule=frontier", f"loop.async_level={args.async_level}",
                     f"run.iterations={args.iterations}", f"run.dir={tmp}/run",
                     "checkpoint.every=0", "eval.every=0"]
        resolved = load_config(args.config, loaded.registry, overrides)
        from spade_core.components import BuildContext

        families = [rc.component.build(rc.options, BuildContext()) for rc in resolved.families]
        programs = [p.source for f in families for p in f.seed_programs()]
        policy = ScriptedPolicy(programs, latency=args.generate_seconds)
        start = time.perf_counter()
        run_dir = run_loop(resolved, loaded, report=lambda message: None, backend=policy,
                           trainer=SleepingTrainer(args.train_seconds))
        elapsed = time.perf_counter() - start
        rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    sides = {key: round(sum(r["pipeline"][key] for r in rows), 2) for key in (
        "generator_busy_seconds", "generator_idle_seconds", "trainer_busy_seconds",
        "trainer_idle_seconds")}
    return {"benchmark": "loop", "async_level": args.async_level, "iterations": len(rows),
            "envs": args.envs, "rollouts_per_env": args.rollouts, "turns": args.turns,
            "generate_seconds_per_call": args.generate_seconds,
            "train_seconds_per_update": args.train_seconds, "seconds": round(elapsed, 2),
            **sides, "staleness_max": max(r["pipeline"]["staleness_max"] for r in rows),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores"}


def run(args: argparse.Namespace) -> int:
    from spade_core.config.load import load_config
    from spade_core.errors import SpadeError
    from spade_core.plugins import load_plugins
    from spade_core.phases import PhaseTimer
    from spade_core.selfplay.dedupe import dedupe
    from spade_core.selfplay.design import design
    from spade_core.selfplay.designer_reward import reward
    from spade_core.selfplay.estimate import estimate
    from spade_core.selfplay.hinting import hint
    from spade_core.selfplay.play import play, play_sessions
    from spade_core.selfplay.remember import remember
    from spade_core.selfplay.setup import build_components, close_all

    if args.async_level is not None:
        result = run_pipeline(args)
        _print(result, args.json)
        return 0
    loaded = load_plugins()
    overrides = [f"loop.envs_per_iteration={args.envs}", f"loop.rollouts_per_env={args.rollouts}",
                 f"loop.max_turns={args.turns}", "loop.max_attempts=1",
                 "designer=full-program", "trainer=none",
                 # One iteration's pipeline is measured (a frontier iteration: design, dedupe,
                 # hint, play, estimate); enough iterations that the config's reachability check
                 # (memory windows) accepts the small rollout counts.
                 "loop.schedule=frontier", "run.iterations=1000"]
    resolved = load_config(args.config, loaded.registry, overrides)
    opened: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="spade-bench-loop-") as tmp:
        try:
            policy = ScriptedPolicy([])
            c = build_components(resolved, Path(tmp), 0, opened, backend=policy)
            policy.programs = [p.source for f in c.families for p in f.seed_programs()]
            if not policy.programs:
                raise SpadeError("bench loop: the configured families have no seed programs")
            loop = resolved.config.loop
            timer = PhaseTimer()
            start = time.perf_counter()
            proposals = design(c, loop, 0, 0, timer)
            dedupe(c, proposals, timer=timer)
            with play_sessions(c, loop, proposals, hinted=True) as tables:
                hint(c, loop, tables, 0, timer)
                play(c, loop, tables, 0, timer)
            with timer.phase("estimate"):
                estimate(c, loop, proposals, 0)
            reward(loop, proposals)
            with timer.phase("remember"):
                remember(c, proposals, 0)
            elapsed = time.perf_counter() - start
        finally:
            close_all(opened, lambda message: None)
    played = sum(1 for p in proposals if p.difficulty is not None)
    episodes = played * 2 * args.rollouts
    # The goal's pipeline (issue 6): validate, hint, rollouts, estimate. Dedupe is the memory's
    # embedding model (measured by `spade bench memory`), reported beside it.
    pipeline = sum(timer.seconds.get(k, 0.0) for k in PIPELINE)
    result = {
        "benchmark": "loop", "envs": args.envs, "envs_played": played,
        "rollouts_per_env": args.rollouts, "turns": args.turns, "episodes": episodes,
        "pipeline": "+".join(PIPELINE), "pipeline_seconds": round(pipeline, 3),
        "envs_per_second": round(args.envs / pipeline, 2),
        "episodes_per_second": round(episodes / pipeline, 1),
        "seconds_with_dedupe": round(elapsed, 3),
        "envs_per_second_with_dedupe": round(args.envs / elapsed, 2),
        "phase_seconds": {k: round(v, 3) for k, v in timer.seconds.items()},
        "goal_envs_per_second": 50, "goal_met": args.envs / pipeline >= 50,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }
    _print(result, args.json)
    return 0


def _print(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")
