"""``spade bench learning``: the interval arithmetic, the aggregation over seeds and arms, and one
real tiny run (bundled model, real sandbox, GRPO against trainer none)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import pytest

from plugins.evals import learning_bench
from plugins.evals.learning_bench import (
    DEFAULT_POOL,
    add_arguments,
    format_table,
    pool_effect,
    run_benchmark,
    same_seeds,
    t_interval,
    validity_after_first,
)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


# --- interval arithmetic -----------------------------------------------------------------------

def test_t_interval_matches_the_textbook_value() -> None:
    # mean 2, sd 1, n 3: half-width t(0.975, 2) / sqrt(3) with t(0.975, 2) = 4.302652729911275.
    stats = t_interval([1.0, 2.0, 3.0])
    assert stats["n"] == 3 and stats["mean"] == pytest.approx(2.0)
    assert stats["sd"] == pytest.approx(1.0)
    half = 4.302652729911275 / math.sqrt(3)
    assert stats["low"] == pytest.approx(2.0 - half)
    assert stats["high"] == pytest.approx(2.0 + half)


def test_t_interval_narrows_with_confidence_and_handles_small_samples() -> None:
    wide, narrow = t_interval([0.1, 0.3, 0.2, 0.6]), t_interval([0.1, 0.3, 0.2, 0.6], 0.5)
    assert wide["low"] < narrow["low"] < narrow["mean"] < narrow["high"] < wide["high"]
    assert t_interval([0.25]) == {"n": 1, "mean": 0.25, "sd": None, "low": None, "high": None,
                                  "confidence": 0.95}
    assert t_interval([])["mean"] is None
    same = t_interval([0.5, 0.5, 0.5])
    assert same["low"] == same["high"] == pytest.approx(0.5)


def test_effects_and_same_seed_check() -> None:
    trained = {"before": {"success": 0.25}, "after": {"success": 0.5}, "run_seed": 0,
               "eval_seed": 7, "eval_items": ["a", "b"], "played": {"0": ["a"]},
               "iterations": [{"envs_proposed": 4, "envs_valid": 2},
                              {"envs_proposed": 4, "envs_valid": 4},
                              {"envs_proposed": 4, "envs_valid": 3}]}
    untrained = {**trained, "after": {"success": 0.375}}
    assert pool_effect(trained, untrained) == pytest.approx(0.125)
    assert same_seeds(trained, untrained)
    assert not same_seeds(trained, {**untrained, "eval_items": ["b", "a"]})
    assert not same_seeds(trained, {**untrained, "played": {"0": ["b"]}})
    assert validity_after_first(trained) == pytest.approx(7 / 8)
    assert validity_after_first({"iterations": trained["iterations"][:1]}) is None


def test_aggregation_over_seeds_with_stand_in_arms(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_benchmark's bookkeeping, with each arm replaced by figures that depend on its seed."""
    calls: list[tuple[str, int, str, int]] = []

    def fake_arm(args: Any, registry: Any, arm: str, seed: int, mode: str, iterations: int,
                 report: Any = None) -> dict[str, Any]:
        calls.append((arm, seed, mode, iterations))
        gain = 0.1 * (seed + 1) if arm == "trained" else 0.0
        valid = 4 if arm == "trained" else 3
        return {"arm": arm, "seed": seed, "run_seed": seed, "eval_seed": 99 + seed,
                "eval_items": ["x", "y"], "played": {"0": ["x"]},
                "before": {"success": 0.25}, "after": {"success": 0.25 + gain},
                "iterations": [{"envs_proposed": 4, "envs_valid": 3, "validity": 0.75}]
                + [{"envs_proposed": 4, "envs_valid": valid, "validity": valid / 4}] *
                (iterations - 1)}

    monkeypatch.setattr(learning_bench, "run_arm", fake_arm)
    result = run_benchmark(_args("--seeds", "3", "--seed", "5", "--updates", "2",
                                 "--designer-iterations", "3", "--designer-seeds", "2"),
                           report=lambda message: None)
    assert [c for c in calls if c[2] == "fixed-pool"] == [
        (arm, seed, "fixed-pool", 2) for seed in (5, 6, 7) for arm in ("trained", "untrained")]
    assert [c for c in calls if c[2] == "selfplay"] == [
        (arm, seed, "selfplay", 3) for seed in (5, 6) for arm in ("trained", "untrained")]
    effect = result["pool_summary"]["effect"]
    assert effect["n"] == 3 and effect["mean"] == pytest.approx(0.7)
    assert effect["low"] < 0.7 < effect["high"]
    assert all(r["same_seeds"] and r["before_identical"] for r in result["pool_runs"])
    designer = result["designer_summary"]
    assert designer["validity_per_iteration"]["trained"] == pytest.approx([0.75, 1.0, 1.0])
    assert designer["validity_per_iteration"]["untrained"] == pytest.approx([0.75, 0.75, 0.75])
    assert designer["effect"]["mean"] == pytest.approx(0.25)
    json.dumps(result)
    table = format_table(result)
    assert "+70.0 points, 95 % CI" in table and "+25.0 points" in table


def test_arms_differ_only_in_the_trainer() -> None:
    args = _args("--updates", "2", "--learning-rate", "1e-3", "--set", "loop.max_turns=1")
    trained = learning_bench.arm_overrides(args, "trained", 3, "fixed-pool", 2)
    untrained = learning_bench.arm_overrides(args, "untrained", 3, "fixed-pool", 2)
    assert [o for o in trained if not o.startswith("trainer")] == \
        [o for o in untrained if not o.startswith("trainer")]
    assert "trainer=none" in untrained and "trainer.options.learning_rate=0.001" in trained
    assert "run.seed=3" in trained and "loop.max_turns=1" in trained


def test_bad_arguments_are_refused() -> None:
    from spade_core.errors import UsageError

    with pytest.raises(UsageError, match="--updates"):
        run_benchmark(_args("--updates", "0"))
    with pytest.raises(UsageError, match="no such file"):
        run_benchmark(_args("--pool", "/nonexistent/pool.jsonl"))


# --- one real tiny run -------------------------------------------------------------------------

@pytest.mark.slow
def test_tiny_real_run(tmp_path: Path) -> None:
    """1 seed, 1 update, 2 environments, the bundled model and the real sandbox: the output's
    structure, and both arms on the same seeds and items (the untrained arm's model never
    changes, so with the same sampling seeds its held-out plays repeat exactly)."""
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(DEFAULT_POOL.read_text().splitlines(keepends=True)[:2]))
    out = tmp_path / "result.json"
    args = _args("--pool", str(pool), "--seeds", "1", "--updates", "1", "--envs", "2",
                 "--rollouts", "2", "--eval-samples", "2", "--designer-iterations", "0",
                 "--set", "backend.options.torch_threads=1", "--set", "loop.hint_max_tokens=16",
                 "--set", "loop.agent_max_tokens=16", "--out", str(out))
    assert learning_bench.run(args) == 0
    result = json.loads(out.read_text())
    assert result["benchmark"] == "learning" and result["seeds"] == [0]
    assert "designer_runs" not in result
    (row,) = result["pool_runs"]
    trained, untrained = row["trained"], row["untrained"]
    assert trained["trainer"] == "grpo" and untrained["trainer"] == "none"
    assert row["same_seeds"] and row["before_identical"]
    assert trained["eval_items"] == untrained["eval_items"] and len(trained["eval_items"]) == 2
    assert trained["eval_seed"] == untrained["eval_seed"] == learning_bench.EVAL_SEED_BASE
    assert trained["played"] == untrained["played"] == {"0": sorted(trained["eval_items"])}
    assert untrained["after"] == untrained["before"]  # no update: the same plays again
    for arm in (trained, untrained):
        for phase in ("before", "after"):
            assert 0.0 <= arm[phase]["success"] <= 1.0
            assert all(n == 2 for _, n in arm[phase]["items"].values())
        (iteration,) = arm["iterations"]
        assert iteration["envs_played"] == 2
    assert trained["iterations"][0]["train"], "the grpo arm reports its update"
    assert row["effect"] == pytest.approx(
        trained["after"]["success"] - trained["before"]["success"])
    assert result["pool_summary"]["effect"]["n"] == 1
