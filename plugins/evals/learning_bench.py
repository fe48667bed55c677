"""Does training learn? ('spade bench learning')

Per seed, two arms with identical seeds: ``trainer: grpo`` and ``trainer: none``. Each arm builds
the configured model, sandbox, memory and families afresh, measures held-out success on a fixed
pool of environments (the ``programs`` eval suite, played unhinted through the sandbox at fresh
seeds the training never uses), runs N fixed-pool iterations (each one GRPO update for the
trained arm, the same rollouts and no update for the other), and measures held-out success again.
The effect of one seed is (after - before) of the trained arm minus (after - before) of the
untrained one; the benchmark reports its mean over seeds with a 95 % t-interval.

Second part: the designer's validity rate (valid / proposed per iteration) in a short self-play
run per arm, again with identical seeds; the effect is the trained minus the untrained validity
over the iterations after the first (iteration 0 is designed before any update, so both arms
propose the same programs there).

Everything is deterministic for a fixed seed: the same seed gives the same pool items, the same
sampling seeds and the same rollouts (generation is seeded per call).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from spade_core.experiment.stats import t_interval

DEFAULT_CONFIG = "configs/quickstart.yaml"
#: The bundled pool: 16 level-1 yes/no environments (see ``plugins/evals/data/README.md``).
DEFAULT_POOL = Path(__file__).resolve().parent / "data" / "learning_pool.jsonl"
#: Held-out evaluation seeds are ``EVAL_SEED_BASE + seed``: far from the loop's own rollout seeds
#: (``run.seed * 1_000_003 + iteration * 7919 + i``) for every seed a run of this benchmark uses.
EVAL_SEED_BASE = 500_000_000
ARMS = ("trained", "untrained")

Reporter = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class _NoHooks:
    """The loop's plugin hooks, silenced: a benchmark's arms are not runs for the console table
    or the experiment loggers."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda **kwargs: None


def silent_plugins(registry: Any) -> Any:
    """The loaded plugins as the run's set-up reads them (``registry``, ``manager.hook``), with
    every hook silenced."""
    return SimpleNamespace(registry=registry, manager=SimpleNamespace(hook=_NoHooks()))


# --- arguments ---------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=DEFAULT_CONFIG,
                        help="config giving the model, backend, sandbox, memory, families and "
                             "the grpo trainer's options (default: the quickstart)")
    parser.add_argument("--pool", default=str(DEFAULT_POOL),
                        help="folder of .py programs or .jsonl of programs: the fixed pool "
                             "(default: the bundled 16 yes/no environments)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds (independent repeats)")
    parser.add_argument("--seed", type=int, default=0, help="first seed; seeds are S..S+K-1")
    parser.add_argument("--updates", type=int, default=3,
                        help="fixed-pool iterations per arm (one GRPO update each when trained)")
    parser.add_argument("--envs", type=int, default=8, help="pool environments per iteration")
    parser.add_argument("--rollouts", type=int, default=3,
                        help="unhinted (and as many hinted) plays per environment and iteration")
    parser.add_argument("--eval-samples", type=int, default=4,
                        help="held-out plays per pool environment (temperature 0.8)")
    parser.add_argument("--limit", type=int, default=None,
                        help="evaluate at most this many pool environments (default all)")
    parser.add_argument("--learning-rate", type=float, default=2e-4,
                        help="the trained arm's learning rate (trainer.options.learning_rate)")
    parser.add_argument("--max-samples", type=int, default=None,
                        help="trainer.options.max_samples (default: the config's)")
    parser.add_argument("--designer-iterations", type=int, default=2,
                        help="self-play iterations per arm for the designer's validity rate "
                             "(0 skips that part)")
    parser.add_argument("--designer-envs", type=int, default=4,
                        help="proposals per self-play iteration in the designer part")
    parser.add_argument("--designer-seeds", type=int, default=None,
                        help="seeds of the designer part (default: --seeds)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a config key for both arms")
    parser.add_argument("--out", default=None, help="write the JSON result here")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _check_arguments(args: argparse.Namespace) -> None:
    from spade_core.errors import UsageError

    for name in ("seeds", "updates", "envs", "rollouts", "eval_samples", "designer_envs"):
        if getattr(args, name) < 1:
            raise UsageError(f"bench learning: --{name.replace('_', '-')} must be at least 1")
    if args.designer_iterations < 0:
        raise UsageError("bench learning: --designer-iterations must be 0 or more")
    if args.limit is not None and args.limit < 1:
        raise UsageError("bench learning: --limit must be at least 1")
    if not Path(args.pool).expanduser().exists():
        raise UsageError(f"bench learning: --pool {args.pool!r}: no such file or folder")


# --- the arms ----------------------------------------------------------------------------------

def arm_overrides(args: argparse.Namespace, arm: str, seed: int, mode: str,
                  iterations: int) -> list[str]:
    """Config overrides of one arm; the two arms differ only in ``trainer``."""
    status_rollouts = max(1, args.rollouts * iterations)  # reachable: the config check accepts it
    envs = args.envs if mode == "fixed-pool" else args.designer_envs
    overrides = [
        f"run.seed={seed}", f"run.iterations={iterations}", "checkpoint.every=0",
        "eval.every=0", f"loop.mode={mode}", f"loop.envs_per_iteration={envs}",
        f"loop.rollouts_per_env={args.rollouts}",
        # Environments stay on the frontier for the whole arm: no retirement changes what the
        # two arms play besides the policy itself.
        f"memory.options.mastery_rollouts={status_rollouts}",
        f"memory.options.too_hard_rollouts={status_rollouts}",
        # Each iteration's samples trained at once, the designer's included (no regeneration
        # window holds them), so that every update the arm counts is one of its iterations.
        "loop.schedule=frontier",
    ]
    if mode == "fixed-pool":
        overrides += [f"loop.pool={args.pool}", "loop.replay_envs=0"]
    overrides += list(args.overrides)
    if arm == "trained":
        overrides.append(f"trainer.options.learning_rate={args.learning_rate}")
        if args.max_samples is not None:
            overrides.append(f"trainer.options.max_samples={args.max_samples}")
    else:
        overrides.append("trainer=none")
    return overrides


def _played(run_dir: Path) -> dict[int, list[str]]:
    """Environment ids played per iteration, from the arm's run directory."""
    played: dict[int, list[str]] = {}
    for file in sorted((run_dir / "envs").glob("*.json")):
        row = json.loads(file.read_text())
        if row.get("status") != "rejected":
            played.setdefault(int(row["iteration"]), []).append(row["id"])
    replays = run_dir / "replays.jsonl"
    if replays.exists():
        for line in replays.read_text().splitlines():
            row = json.loads(line)
            played.setdefault(int(row["iteration"]), []).append(row["id"])
    return {k: sorted(v) for k, v in sorted(played.items())}


def _iteration_row(m: dict[str, Any]) -> dict[str, Any]:
    train = m.get("train") or {}
    return {
        "iteration": m["iteration"], "envs_proposed": m["envs_proposed"],
        "envs_valid": m["envs_valid"], "envs_played": m["envs_played"],
        "validity": (m["envs_valid"] / m["envs_proposed"]) if m["envs_proposed"] else None,
        "agent_success_unhinted": m["agent_success_unhinted"],
        "agent_success_hinted": m["agent_success_hinted"],
        "train": {k: v for k, v in train.items() if isinstance(v, (int, float, str))},
        "seconds": {k: round(v, 1) for k, v in m.get("seconds", {}).items()},
    }


def _eval_figures(result: Any) -> dict[str, Any]:
    return {"success": result.overall.pass_at_1,
            "items": {r["id"]: [r["correct"], r["n"]] for r in result.items}}


def run_arm(args: argparse.Namespace, registry: Any, arm: str, seed: int, mode: str,
            iterations: int, report: Reporter = _stderr) -> dict[str, Any]:
    """One arm: build everything from the config, evaluate (fixed-pool mode), run the
    iterations, evaluate again. Returns its figures."""
    from spade_core.config.load import load_config
    from spade_core.eval.scores import play_items
    from spade_core.interfaces import EvalSettings
    from spade_core.run_info import RunInfo
    from spade_core.selfplay.artifacts import RunArtifacts
    from spade_core.selfplay.iteration import run_iteration
    from spade_core.selfplay.setup import close_all, open_run

    from plugins.evals.programs_suite import ProgramsSuite

    overrides = arm_overrides(args, arm, seed, mode, iterations)
    resolved = load_config(args.config, registry, overrides)
    config = resolved.config
    eval_seed = EVAL_SEED_BASE + seed
    settings = EvalSettings(samples=args.eval_samples, temperature=0.8,
                            max_new_tokens=config.loop.agent_max_tokens, seed=eval_seed,
                            max_turns=config.loop.max_turns,
                            success_threshold=config.loop.success_threshold)
    out: dict[str, Any] = {"arm": arm, "seed": seed, "mode": mode, "run_seed": config.run.seed,
                           "trainer": resolved.components["trainer"].component.name,
                           "overrides": overrides}
    started = time.perf_counter()
    opened: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="spade-bench-learning-") as tmp:
        run_dir = Path(tmp)
        try:
            artifacts = RunArtifacts(run_dir)
            artifacts.create(resolved.to_dict())
            run_info = RunInfo(run_dir=run_dir, config=resolved.to_dict(),
                               seed=config.run.seed)
            # The set-up of `spade run` (components, fixed pool, schedule, guard), with the
            # loop's hooks silenced.
            run = open_run(resolved, silent_plugins(registry), artifacts, run_info, opened)
            c = run.components
            suite = items = None
            if run.pool is not None:
                run.pool.seed_memory(c.memory)
                suite = ProgramsSuite(args.pool, c.sandbox, c.families)
                items = suite.items(args.limit, eval_seed)
                out["eval_seed"] = eval_seed
                out["eval_items"] = [item.id for item in items]
                t0 = time.perf_counter()
                out["before"] = _eval_figures(play_items(suite, "programs", items, c.backend,
                                                         settings))
                report(f"  seed {seed} {arm}: held-out success before "
                       f"{out['before']['success']:.3f} ({time.perf_counter() - t0:.0f} s)")
            rows = []
            for iteration in range(iterations):
                run_info.iteration = iteration
                metrics = run_iteration(run, iteration)
                rows.append(_iteration_row(metrics))
                report(f"  seed {seed} {arm} {mode}: iteration {iteration + 1}/{iterations} "
                       f"valid {metrics['envs_valid']}/{metrics['envs_proposed']}, success "
                       f"{metrics['agent_success_unhinted']:.2f} unhinted, "
                       f"{sum(metrics['seconds'].values()):.0f} s")
            out["iterations"] = rows
            out["played"] = {str(k): v for k, v in _played(run_dir).items()}
            if suite is not None and items is not None:
                t0 = time.perf_counter()
                out["after"] = _eval_figures(play_items(suite, "programs", items, c.backend,
                                                        settings))
                report(f"  seed {seed} {arm}: held-out success after "
                       f"{out['after']['success']:.3f} ({time.perf_counter() - t0:.0f} s)")
        finally:
            close_all(opened, report)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


# --- the benchmark -----------------------------------------------------------------------------

def pool_effect(trained: dict[str, Any], untrained: dict[str, Any]) -> float:
    """One seed's effect: the trained arm's change in held-out success minus the untrained's."""
    return ((trained["after"]["success"] - trained["before"]["success"])
            - (untrained["after"]["success"] - untrained["before"]["success"]))


def validity_after_first(arm: dict[str, Any]) -> float | None:
    """Valid / proposed over the iterations after the first (pooled), or None if none."""
    rows = arm["iterations"][1:]
    proposed = sum(r["envs_proposed"] for r in rows)
    return sum(r["envs_valid"] for r in rows) / proposed if proposed else None


def same_seeds(trained: dict[str, Any], untrained: dict[str, Any]) -> bool:
    """Whether the two arms ran with the same run seed, evaluation seed and items, and played
    the same environments in their first iteration (later ones may differ with the policy)."""
    keys = ("run_seed", "eval_seed", "eval_items")
    return (all(trained.get(k) == untrained.get(k) for k in keys)
            and trained.get("played", {}).get("0") == untrained.get("played", {}).get("0"))


def run_benchmark(args: argparse.Namespace, report: Reporter = _stderr,
                  partial: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Both parts for every seed; the figures as one JSON-able dict. ``partial`` is given the
    figures so far after each seed (a long run killed midway keeps what it measured)."""
    from spade_core.plugins import load_plugins

    _check_arguments(args)
    registry = load_plugins().registry
    started = time.perf_counter()
    seeds = [args.seed + i for i in range(args.seeds)]
    index_rows = []
    for seed in seeds:
        arms = {arm: run_arm(args, registry, arm, seed, "fixed-pool", args.updates, report)
                for arm in ARMS}
        index_rows.append({"seed": seed, **arms, "same_seeds": same_seeds(*arms.values()),
                          "before_identical": arms["trained"]["before"]
                          == arms["untrained"]["before"],
                          "effect": pool_effect(arms["trained"], arms["untrained"])})
        if partial is not None:
            partial({"benchmark": "learning", "partial": True, "pool_runs": index_rows})
    result: dict[str, Any] = {
        "benchmark": "learning", "config": args.config, "pool": args.pool, "seeds": seeds,
        "updates": args.updates, "envs_per_iteration": args.envs, "rollouts": args.rollouts,
        "eval_samples": args.eval_samples, "learning_rate": args.learning_rate,
        "max_samples": args.max_samples, "designer_iterations": args.designer_iterations,
        "designer_envs": args.designer_envs, "overrides": list(args.overrides),
        "pool_runs": index_rows,
        "pool_summary": {
            "before": _mean([r["trained"]["before"]["success"] for r in index_rows]),
            "after_trained": _mean([r["trained"]["after"]["success"] for r in index_rows]),
            "after_untrained": _mean([r["untrained"]["after"]["success"] for r in index_rows]),
            "effect": t_interval([r["effect"] for r in index_rows]),
        },
    }
    if args.designer_iterations:
        n = args.designer_seeds if args.designer_seeds is not None else args.seeds
        designer_rows = []
        for seed in [args.seed + i for i in range(n)]:
            arms = {arm: run_arm(args, registry, arm, seed, "selfplay",
                                 args.designer_iterations, report) for arm in ARMS}
            v = {arm: validity_after_first(a) for arm, a in arms.items()}
            designer_rows.append({
                "seed": seed, **arms,
                "validity_per_iteration": {arm: [r["validity"] for r in a["iterations"]]
                                           for arm, a in arms.items()},
                "validity_after_first": v,
                "effect": (v["trained"] - v["untrained"]) if None not in v.values() else None})
            if partial is not None:
                partial({**result, "partial": True, "designer_runs": designer_rows})
        effects = [r["effect"] for r in designer_rows if r["effect"] is not None]
        per_iteration = {arm: [_mean([r["validity_per_iteration"][arm][i] for r in designer_rows
                                      if r["validity_per_iteration"][arm][i] is not None])
                               for i in range(args.designer_iterations)] for arm in ARMS}
        result["designer_runs"] = designer_rows
        result["designer_summary"] = {"validity_per_iteration": per_iteration,
                                      "effect": t_interval(effects)}
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["machine"] = (f"{platform.machine()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}, load average "
                         f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
    return result


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _interval(stats: dict[str, Any]) -> str:
    if stats["mean"] is None:
        return "no seed"
    if stats["low"] is None:
        return f"{100 * stats['mean']:+.1f} points (one seed: no interval)"
    return (f"{100 * stats['mean']:+.1f} points, 95 % CI [{100 * stats['low']:+.1f}, "
            f"{100 * stats['high']:+.1f}] over {stats['n']} seeds")


def format_table(result: dict[str, Any]) -> str:
    """The figures as text: one line per seed and arm, then the effects."""
    lines = ["held-out success on the pool (% of plays, fresh seeds)",
             "seed  arm        before  after  change",
             "----  ---------  ------  -----  ------"]
    for row in result["pool_runs"]:
        for arm in ARMS:
            a = row[arm]
            change = a["after"]["success"] - a["before"]["success"]
            lines.append(f"{row['seed']:>4}  {arm:<9}  {_pct(a['before']['success']):>6}  "
                         f"{_pct(a['after']['success']):>5}  {100 * change:+6.1f}")
    lines.append("effect (trained change - untrained change): "
                 + _interval(result["pool_summary"]["effect"]))
    if "designer_summary" in result:
        lines += ["", "designer validity per iteration (%, mean over seeds)"]
        for arm in ARMS:
            values = result["designer_summary"]["validity_per_iteration"][arm]
            lines.append(f"  {arm:<9}  " + "  ".join(_pct(v) for v in values))
        lines.append("effect (trained - untrained, iterations after the first): "
                     + _interval(result["designer_summary"]["effect"]))
    lines.append(f"{result['seconds']:.0f} s; {result['machine']}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    def write(result: dict[str, Any]) -> None:
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=1) + "\n")

    result = run_benchmark(args, partial=write)
    write(result)
    print(json.dumps(result) if args.json else format_table(result))
    return 0
