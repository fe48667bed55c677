"""Checkpoints, exact resume after SIGKILL, and the three run modes, on the fake self-play
components with the real ``faiss`` memory (hashing embedder)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spade_core.config.load import resolve_config
from spade_core.errors import ConfigError
from spade_core.selfplay.checkpoint import checkpoints, latest_checkpoint, read_state
from spade_core.selfplay.runner import run

from fakes.cli import ROOT
from fakes.training import (
    POOL_PROGRAM,
    load_training_plugins,
    memory_rows,
    training_config,
)



def metrics(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def run_in_process(run_dir, iterations, resume=False, schedule="frontier", **sections):
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, iterations, schedule, **sections),
                              loaded.registry, "t.yaml")
    return run(resolved, loaded, report=lambda m: None, resume=run_dir if resume else None)


def test_checkpoint_holds_trainer_memory_rng_and_positions(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 3, checkpoint={"every": 2, "keep": 5})
    names = [p.name for p in checkpoints(run_dir)]
    assert names == ["iter-000000", "iter-000002", "iter-000003"]  # start, every 2, last
    last = latest_checkpoint(run_dir)
    state = read_state(last)
    assert state["next_iteration"] == 3 and state["trainer"] is True
    assert state["corpus"] == {"position": 6}  # 3 iterations x 2 documents
    assert json.loads((last / "trainer" / "updates.json").read_text()) == {"updates": 3}
    assert (last / "memory" / "memory.sqlite").is_file() and (last / "rng.json").is_file()
    assert state["memory"] == {"kind": "checkpoint"}
    assert (last / "memory" / "pool.json").is_file()  # the index too: resume need not rebuild it
    assert not read_state(checkpoints(run_dir)[0])["trainer"]  # nothing to save before updates
    assert not list((run_dir / "checkpoints").glob(".tmp-*"))


def test_keep_prunes_old_checkpoints(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 4, checkpoint={"every": 1, "keep": 2})
    assert [p.name for p in checkpoints(run_dir)] == ["iter-000003", "iter-000004"]


def test_resume_continues_and_extends_iterations(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 2)
    run_in_process(run_dir, 4, resume=True)
    assert [r["iteration"] for r in metrics(run_dir)] == [0, 1, 2, 3]
    assert [r["train"]["updates"] for r in metrics(run_dir)] == [1, 2, 3, 4]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 4
    assert summary["resumed_from"] == 2


def test_resume_needs_a_checkpoint_and_a_run(tmp_path):
    with pytest.raises(ConfigError, match="not a run directory"):
        run_in_process(tmp_path / "nothing", 2, resume=True)
    run_dir = run_in_process(tmp_path / "run", 1, checkpoint={"every": 0})
    with pytest.raises(ConfigError, match="no checkpoint"):
        run_in_process(run_dir, 2, resume=True, checkpoint={"every": 0})


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _kill_child(run_dir: Path, iterations: int, resume: bool,
                rng: random.Random | None, schedule: str) -> int | None:
    """Start the child run; SIGKILL it at a random moment once it has started iterating (or, one
    time in five, at a random moment during start-up); None when it was killed. Without ``rng``
    the child runs to its end."""
    script = ROOT / "tests" / "fakes" / "training.py"
    args = [sys.executable, str(script), str(run_dir), str(iterations),
            schedule]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    marker = run_dir / "isolation.jsonl"  # one line each time a (resumed) run starts iterating
    before = _lines(marker)
    child = subprocess.Popen(args + (["--resume"] if resume else []), env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if rng is None:
            return child.wait(timeout=120)
        if rng.random() < 0.2:
            return child.wait(timeout=rng.uniform(0.0, 2.0))
        deadline = time.time() + 60
        while _lines(marker) == before and child.poll() is None and time.time() < deadline:
            time.sleep(0.01)
        return child.wait(timeout=rng.uniform(0.0, 1.0))
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        return None


@pytest.mark.slow
@pytest.mark.parametrize("schedule", ["frontier", "window"])
def test_sigkill_at_random_points_then_resume_loses_and_duplicates_nothing(tmp_path, schedule):
    # An iteration takes about 0.25 s in the child, a kill comes within 1 s of the (re)start:
    # fewer than three kills cannot get through 14 iterations.
    iterations = 14
    reference = run_in_process(tmp_path / "reference", iterations, schedule=schedule)
    run_dir = tmp_path / "killed"
    rng = random.Random(int(os.environ.get("SPADE_KILL_SEED", "7")))
    kills, resumes, deadline = 0, 0, time.time() + 180
    while time.time() < deadline:
        started = latest_checkpoint(run_dir) is not None
        if run_dir.exists() and not started:  # killed before its first checkpoint: start over
            import shutil

            shutil.rmtree(run_dir)
        if kills >= 6:  # enough: let it finish
            code = _kill_child(run_dir, iterations, started, None, schedule)
        else:
            code = _kill_child(run_dir, iterations, started, rng, schedule)
        resumes += int(started)
        if code is None:
            kills += 1
            continue
        assert code == 0
        break
    assert kills >= 3 and resumes >= 1
    rows = metrics(run_dir)
    assert [r["iteration"] for r in rows] == list(range(iterations))  # no gap, no duplicate
    assert [r["train"]["updates"] for r in rows] == list(range(1, iterations + 1))
    assert memory_rows(run_dir) == memory_rows(reference)  # no env lost or duplicated
    # Replays continue exactly: the same environments replayed in the same iterations.
    assert sum(r["envs_replayed"] for r in rows) > 0
    assert [r["envs_replayed"] for r in rows] == [r["envs_replayed"] for r in metrics(reference)]
    replayed = [(e["iteration"], e["id"]) for e in map(json.loads, (
        run_dir / "replays.jsonl").read_text().splitlines())]
    expected = [(e["iteration"], e["id"]) for e in map(json.loads, (
        reference / "replays.jsonl").read_text().splitlines())]
    assert replayed == expected  # no replay row lost or written twice
    assert [r["corpus_state"] for r in rows] == [r["corpus_state"] for r in metrics(reference)]
    state = read_state(latest_checkpoint(run_dir))
    assert state["next_iteration"] == iterations
    trained = json.loads((latest_checkpoint(run_dir) / "trainer" / "samples.json").read_text())
    assert trained == \
        json.loads((latest_checkpoint(reference) / "trainer" / "samples.json").read_text())
    if schedule == "window":  # windows of 4 iterations: designs held across kills are
        # released at the next window's start (updates 5, 9, 13) with their recorded log-probs
        # and the same reward as in the uninterrupted run
        assert {d[0] for d in trained["designs"]} == {5, 9, 13}
        assert all(d[3] is not None for d in trained["designs"])
        assert [r["window"] for r in rows] == [r["window"] for r in metrics(reference)]


# -- modes --------------------------------------------------------------------------------------


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


#: A pool program whose step raises on odd seeds: half of every environment's plays fail.
BROKEN_ON_ODD_SEEDS = '''
class QAEnv:
    def reset(self, seed=None):
        self.seed = seed or 0
        return "Question: what is six times seven?", {}

    def step(self, action):
        if self.seed % 2:
            raise RuntimeError("broken on odd seeds")
        ok = action.strip() == "\\\\boxed{42}"
        return ("correct" if ok else "wrong"), (1.0 if ok else 0.0), True, False, {}

    def solution(self):
        return "\\\\boxed{42}"
'''


@pytest.mark.parametrize("mode,unhinted", [("drop", 2), ("zero", 4)])
def test_failed_plays_are_dropped_or_counted_as_zero(tmp_path, mode, unhinted):
    """The real process sandbox turns the raising step into a failed play: under ``drop`` (the
    reference) the two failed unhinted plays of four count nowhere and are not trained; the
    failed hinted play counts 0 in both modes; ``zero`` keeps every play at reward 0."""
    import envmemory.plugin as memory_plugin
    import plugins.designer.plugin as designer_plugin
    import plugins.estimators as estimators_plugin
    import plugins.trainers.plugin as trainers_plugin
    import sandbox.plugin as sandbox_plugin
    from spade_core.testing import load_test_plugins

    from fakes.selfplay import FakeSelfPlayPlugin
    from fakes.training import FakeTrainingPlugin

    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "env0.py").write_text(BROKEN_ON_ODD_SEEDS)
    loaded = load_test_plugins(FakeSelfPlayPlugin(), FakeTrainingPlugin(), designer_plugin,
                               estimators_plugin, trainers_plugin, memory_plugin, sandbox_plugin)
    data = training_config(tmp_path / "run", 1, loop={
        "envs_per_iteration": 1, "rollouts_per_env": 4, "hint_plays_per_env": 2,
        "max_turns": 2, "mode": "fixed-pool", "pool": str(pool), "replay_envs": 0,
        "failed_plays": mode}, sandbox={"plugin": "process", "options": {"workers": 1}})
    run_dir = run(resolve_config(data, loaded.registry, "t.yaml"), loaded,
                  report=lambda m: None)
    [row] = metrics(run_dir)
    assert row["plays_failed"] == 3  # two unhinted, one hinted
    [(_, _, _, [(_, hinted, counted)])] = memory_rows(run_dir)
    assert hinted == [1.0, 0.0] and counted == [0.0] * unhinted
    trained = json.loads((latest_checkpoint(run_dir) / "trainer" / "samples.json").read_text())
    assert trained["samples"] == unhinted


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


def test_config_differences_allow_only_iterations_dir_and_logging():
    from spade_core.config.resume import config_differences

    stored = {"run": {"dir": "a", "iterations": 2, "seed": 0}, "trainer": {"plugin": "grpo"},
              "logging": {"backends": []}}
    current = {"run": {"dir": "b", "iterations": 5, "seed": 0}, "trainer": {"plugin": "grpo"},
               "logging": {"backends": ["tensorboard"]}}
    assert config_differences(stored, current) == []
    current["run"]["seed"] = 1
    current["trainer"] = {"plugin": "none"}
    assert config_differences(stored, current) == ["run.seed", "trainer.plugin"]


def test_cli_resume_errors_are_usage_errors(spade, tmp_path):
    result = spade("run")
    assert result.returncode == 2 and "--resume RUN_DIR" in result.stderr
    result = spade("run", "--resume", str(tmp_path))
    assert result.returncode == 2 and "config.resolved.yaml" in result.stderr


def test_cli_resume_refuses_a_changed_config(spade, tmp_path):
    import yaml

    from spade_core.config.load import load_config
    from spade_core.plugins import load_plugins

    config = ROOT / "configs" / "quickstart.yaml"
    resolved = load_config(config, load_plugins().registry)
    (tmp_path / "config.resolved.yaml").write_text(yaml.safe_dump(resolved.to_dict()))
    result = spade("run", str(config), "--resume", str(tmp_path), "--set", "run.seed=5")
    assert result.returncode == 2 and "run.seed" in result.stderr


# -- faults: resume state without pickle, a damaged checkpoint, a full disk ---------------------


def test_generator_states_are_json_and_restore_exactly(tmp_path):
    import numpy as np

    from spade_core.selfplay.checkpoint import (
        restore_rng,
        rng_from_json,
        rng_state,
        rng_to_json,
    )

    random.random(), np.random.random()
    text = json.dumps(rng_to_json(rng_state()))
    expected = (random.random(), float(np.random.random()))
    random.seed(99), np.random.seed(99)
    restore_rng(rng_from_json(json.loads(text)))
    assert (random.random(), float(np.random.random())) == expected
    with pytest.raises(ValueError, match="malformed generator state"):
        rng_from_json({"python": [3, "not a list", None]})


def test_a_legacy_pickle_is_never_loaded_and_the_resume_says_so(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 2)
    last = latest_checkpoint(run_dir)
    (last / "rng.json").unlink()
    (last / "manifest.json").unlink()  # as a checkpoint written before both
    marker = tmp_path / "unpickled"
    # A pickle that would create a file if it were ever loaded.
    (last / "rng.pkl").write_bytes(
        b"cos\nsystem\n(V" + f"touch {marker}".encode() + b"\ntR.")
    messages = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, 3), loaded.registry, "t.yaml")
    run(resolved, loaded, report=messages.append, resume=run_dir)
    assert not marker.exists()
    assert any("rng.pkl" in m and "not loaded" in m for m in messages), messages
    assert [r["iteration"] for r in metrics(run_dir)] == [0, 1, 2]


def test_a_truncated_latest_checkpoint_falls_back_to_the_previous_one(tmp_path):
    run_dir = run_in_process(tmp_path / "run", 3, checkpoint={"every": 1, "keep": 3})
    assert [p.name for p in checkpoints(run_dir)][-2:] == ["iter-000002", "iter-000003"]
    cut = latest_checkpoint(run_dir) / "trainer" / "samples.json"
    cut.write_bytes(cut.read_bytes()[:10])  # cut short after it was written
    messages = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, 4, checkpoint={"every": 1, "keep": 3}),
                              loaded.registry, "t.yaml")
    run(resolved, loaded, report=messages.append, resume=run_dir)
    [warning] = [m for m in messages if "damaged" in m]
    assert "checkpoint iter-000003 is damaged (trainer/samples.json has 10 bytes" in warning
    assert "resuming from the previous one, iter-000002" in warning
    assert "resuming at iteration 2 from iter-000002" in "\n".join(messages)
    kept = run_dir / "checkpoints" / "damaged-iter-000003"
    assert (kept / "trainer" / "samples.json").read_bytes() == cut.read_bytes() or kept.is_dir()
    rows = metrics(run_dir)
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3]
    assert [r["train"]["updates"] for r in rows] == [1, 2, 3, 4]
    assert read_state(latest_checkpoint(run_dir))["next_iteration"] == 4


def test_a_damaged_only_checkpoint_is_refused_with_a_clear_error(tmp_path):
    from spade_core.selfplay.checkpoint import CheckpointError

    run_dir = run_in_process(tmp_path / "run", 1, checkpoint={"every": 1, "keep": 1})
    (latest_checkpoint(run_dir) / "state.json").write_text('{"next_iter')
    with pytest.raises(CheckpointError, match="no intact checkpoint is left"):
        run_in_process(run_dir, 2, resume=True, checkpoint={"every": 1, "keep": 1})
    assert (run_dir / "checkpoints" / "damaged-iter-000001" / "state.json").is_file()


def test_a_full_disk_while_a_checkpoint_is_written_loses_nothing_and_resumes(tmp_path):
    # The child's file-size limit lets the trainer's stand-in weights of two updates through
    # (2 x 3 MB, 7 MB allowed) but not of three: the third checkpoint fails while it is written.
    run_dir = tmp_path / "run"
    script = ROOT / "tests" / "fakes" / "training.py"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    child = subprocess.run(
        [sys.executable, str(script), str(run_dir), "5", "frontier", "--delay=0",
         "--weights-bytes=3000000", "--file-limit=7000000", "--report"],
        env=env, capture_output=True, text=True, timeout=120)
    assert child.returncode == 1, child.stderr
    assert "could not write checkpoint iter-000003" in child.stderr
    assert "File too large" in child.stderr and "the earlier checkpoint iter-000002 is intact" \
        in child.stderr
    assert f"spade: continue it with: spade run --resume {run_dir}" in child.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed" and "iter-000003" in summary["error"]
    assert [p.name for p in checkpoints(run_dir)] == ["iter-000001", "iter-000002"]
    assert not list((run_dir / "checkpoints").glob(".tmp-*"))  # no half-written checkpoint
    assert [r["iteration"] for r in metrics(run_dir)] == [0, 1, 2]  # iteration 2's row kept
    run_in_process(run_dir, 5, resume=True)  # space freed: the run continues
    rows = metrics(run_dir)
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["train"]["updates"] for r in rows] == [1, 2, 3, 4, 5]


def test_a_second_run_on_a_memory_in_use_is_refused_naming_the_holder(tmp_path):
    from envmemory.store import RecordStore

    shared = tmp_path / "shared-memory"
    memory = {"plugin": "faiss", "options": {"embedder": "hashing", "path": str(shared),
                                             "mastery_rollouts": 3, "too_hard_rollouts": 3}}
    first = run_in_process(tmp_path / "first", 1, memory=memory)
    assert not (first / "memory").exists()  # the first run's memory is the shared one
    holder = RecordStore(shared)  # the first run, still writing its memory
    try:
        with pytest.raises(ConfigError) as refused:
            run_in_process(tmp_path / "second", 1, memory=memory)
        message = str(refused.value)
        assert f"{shared} is already open for writing by another process (pid {os.getpid()}" \
            in message
        assert "memory.options.path" in message and "one memory has one writer" in message
        summary = json.loads((tmp_path / "second" / "summary.json").read_text())
        assert summary["status"] == "failed" and summary["iterations_completed"] == 0
        assert len(list(holder.records())) > 0  # the holder's records untouched
    finally:
        holder.close()
    run_in_process(tmp_path / "first", 2, resume=True, memory=memory)  # it continues
    assert [r["iteration"] for r in metrics(tmp_path / "first")] == [0, 1]
