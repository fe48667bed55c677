"""The fixed pool (spade_core.selfplay.pool, loop.mode: fixed-pool): the draw as the reference's,
from a folder or an imported run directory, and the keys that differ from self-play."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from spade_core.config.load import resolve_config
from spade_core.errors import ConfigError

from fakes.cli import ROOT
from fakes.training import (
    load_training_plugins,
    memory_rows,
    metrics_rows,
    POOL_PROGRAM,
    run_in_process,
    training_config,
)


metrics = metrics_rows


def _pool_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "pool"
    folder.mkdir()
    for i, q in enumerate(["six times seven", "forty plus two", "eighty-four halved"]):
        (folder / f"env{i}.py").write_text(POOL_PROGRAM.format(q=q))
    return folder


def test_selfplay_trainer_none_and_fixed_pool_differ_only_in_their_keys(tmp_path):
    pool = _pool_folder(tmp_path)
    variants = {
        "selfplay": {},
        "none": {"trainer": "none"},
        "fixed-pool": {"loop": {"envs_per_iteration": 2, "rollouts_per_env": 3, "max_turns": 2,
                                "mode": "fixed-pool", "pool": str(pool)}},
    }
    rows = {}
    for name, change in variants.items():
        run_dir = run_in_process(tmp_path / name, 2, **change)
        rows[name] = metrics(run_dir)
    assert all(r["train"]["updates"] >= 1 for r in rows["selfplay"])
    assert rows["none"][0]["train"]["designer_samples"] > 0  # the none trainer counts only
    index_rows = rows["fixed-pool"]
    assert [r["mode"] for r in index_rows] == ["fixed-pool"] * 2
    assert all(r["designer_attempts"] == 0 for r in index_rows)
    # The pool's draw is self-play's replay: iteration 0 plays two of the three, iteration 1 the
    # third plus those two again.
    assert [(r["envs_played"], r["envs_replayed"]) for r in index_rows] == [(2, 0), (3, 2)]
    played = {r[0] for r in memory_rows(tmp_path / "fixed-pool")}
    assert len(played) == 3  # the whole pool went into the run's memory, nothing designed


def test_fixed_pool_shuffled_draw_as_the_reference(tmp_path):
    """``pool_order: shuffle`` with one-iteration windows: a fresh draw every iteration from the
    reference's seeded shuffle, without replacement until the pool is exhausted, no hint."""
    from spade_core.records import program_id

    pool = _pool_folder(tmp_path)
    for i, q in enumerate(["nine squared", "ten minus one"], start=3):
        (pool / f"env{i}.py").write_text(POOL_PROGRAM.format(q=q))
    run_dir = run_in_process(tmp_path / "run", 3, schedule="window", loop={
        "envs_per_iteration": 2, "rollouts_per_env": 2, "max_turns": 2, "mode": "fixed-pool",
        "pool": str(pool), "pool_order": "shuffle", "pool_seed": 42,
        "regeneration_interval": 1, "hint_plays_per_env": 0})
    # The reference's draw, written out: the file paths sorted, random.Random(42).shuffle, two
    # at a time; the third draw takes the last one and completes from a fresh shuffle (same
    # generator) without it.
    paths = sorted(str(p) for p in pool.glob("*.py"))
    rng = random.Random(42)
    order = list(paths)
    rng.shuffle(order)
    refill = list(paths)
    rng.shuffle(refill)
    third = [order[4]] + [p for p in refill if p != order[4]][:1]
    ids = {p: program_id(Path(p).read_text()) for p in paths}
    expected = [{ids[p] for p in order[0:2]}, {ids[p] for p in order[2:4]},
                {ids[p] for p in third}]
    rows = memory_rows(run_dir)
    drawn = [{r[0] for r in rows if any(h[0] == i for h in r[3])} for i in range(3)]
    assert drawn == expected
    assert len(drawn[0] | drawn[1]) == 4  # no repeat before the pool is exhausted
    assert all(not h[1] for r in rows for h in r[3])  # no hinted play
    assert [(m["envs_played"], m["envs_replayed"], m["hints"]) for m in metrics(run_dir)] == \
        [(2, 0, 0)] * 3


def test_fixed_pool_from_an_imported_run_dir(tmp_path):
    pool = _pool_folder(tmp_path)
    # What `spade envs import` leaves: a run directory whose memory holds frontier records.
    import envmemory.plugin as memory_plugin
    from envmemory.options import MemoryOptions
    from spade_core.components import BuildContext
    from spade_core.records import EnvRecord, program_id

    imported = tmp_path / "imported"
    memory = memory_plugin.build_memory(MemoryOptions(embedder="hashing"),
                                        BuildContext(run_dir=imported))
    for path in sorted(pool.glob("*.py")):
        source = path.read_text()
        memory.add(EnvRecord(id=program_id(source), source=source, family="fake-qa",
                             status="frontier"))
    memory.close()
    run_dir = run_in_process(tmp_path / "run", 2, loop={
        "envs_per_iteration": 2, "rollouts_per_env": 3, "mode": "fixed-pool",
        "pool": str(imported)})
    drawn = [(r["envs_played"], r["envs_replayed"]) for r in metrics(run_dir)]
    assert drawn == [(2, 0), (3, 2)]
    assert len(memory_rows(run_dir)) == 3


def test_fixed_pool_needs_a_pool():
    loaded = load_training_plugins()
    data = training_config(Path("/nonexistent"), 1, loop={"mode": "fixed-pool"})
    with pytest.raises(ConfigError, match="needs loop.pool"):
        resolve_config(data, loaded.registry, "t.yaml")


def test_quickstart_modes_resolve_with_only_those_keys_changed():
    from spade_core.config.load import load_config
    from spade_core.plugins import load_plugins

    registry = load_plugins().registry
    root = ROOT / "configs" / "quickstart.yaml"
    full = load_config(root, registry).to_dict()
    frozen = load_config(root, registry, ["trainer=none"]).to_dict()
    pool = load_config(root, registry, ["loop.mode=fixed-pool", "loop.pool=runs/pool"]).to_dict()
    for other, keys in ((frozen, {"trainer"}), (pool, {"loop"})):
        assert {k for k in full if full[k] != other[k]} == keys
    assert {k for k in full["loop"] if full["loop"][k] != pool["loop"][k]} == {"mode", "pool"}
