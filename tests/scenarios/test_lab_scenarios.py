"""The curriculum lab's scenarios (experiments/lab-*.yaml, docs/lab.md "Scenarios") on a small
tournament: in every scenario the bounds come out in order. The ability-reading oracle is at
least every other arm, and, where the scenario has trap cells, the random designer over the
ordinary cells is at least the random designer over every kind (issue 47)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from spade_core.config.load import load_config
from spade_core.experiment.spec import arm_overrides, load_spec
from spade_core.plugins import load_plugins
from spade_core.selfplay.run_loop import run

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("lab-traps", "lab-ceiling", "lab-capability-slow", "lab-capability-fast")
#: Small: a few iterations (the scenarios' own lengths are 8 and 32) and 2 seeds, 6 for the two
#: random arms, whose runs differ more from seed to seed than the gap between them (at 10 %
#: leaky and 10 % noisy cells, a fifth of the random designer's slots are lost to traps).
ITERATIONS, SEEDS, RANDOM_SEEDS = 6, (0, 1), tuple(range(6))


def final_heldout(tmp_path: Path, base: Path, overrides: list[str], seed: int) -> float:
    loaded = load_plugins()
    resolved = load_config(base, loaded.registry, [
        f"run.dir={tmp_path / str(len(list(tmp_path.iterdir())))}",
        f"run.iterations={ITERATIONS}", f"run.seed={seed}", "eval.suites=[lab-grid]",
        f"eval.every={ITERATIONS}", *overrides])
    run_dir = run(resolved, loaded, report=lambda line: None)
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r["eval"]["lab-grid"]["pass@1"] for r in rows if "eval" in r][-1]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_bounds_come_out_in_order(tmp_path, scenario):
    spec, base = load_spec(ROOT / "experiments" / f"{scenario}.yaml")
    scores = {}
    for name, arm in spec.arms.items():
        overrides = [o.replace("plugins/lab/data/", f"{ROOT}/plugins/lab/data/")
                     for o in [*spec.set, *arm_overrides(arm)]]
        seeds = RANDOM_SEEDS if name.startswith("random") else SEEDS
        scores[name] = statistics.mean(final_heldout(tmp_path, base, overrides, seed)
                                       for seed in seeds)
    table = ", ".join(f"{k} {v:.3f}" for k, v in scores.items())
    assert all(scores["oracle"] >= v for v in scores.values()), table
    traps = any(o.startswith("backend.options.trap_share=") and float(o.split("=")[1]) > 0
                for o in spec.set)
    assert traps and scores["random-ordinary"] >= scores["random"], table
    print(f"{scenario}: {table}")
