"""The self-play loop's wiring and bookkeeping, with fake backend, sandbox, memory and corpus;
how a run ends when its start-up is refused or its disk is full (with the real memory).

The real model, sandbox and memory run in tests/scenarios/test_selfplay_e2e.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.trainers.plugin as trainers_plugin
import spade_core.selfplay.artifacts as artifacts
from envmemory.store import RecordStore
from spade_core.config.load import resolve_config
from spade_core.disk_space import DiskFullError
from spade_core.errors import PluginError
from spade_core.selfplay.run_loop import run
from spade_core.testing import load_test_plugins

from fakes.disk import FullDisk, enospc, sqlite_full
from fakes.selfplay import (
    FAKE_RUN_CONFIG,
    FakeSelfPlayPlugin,
    RecordingPlugin,
    make_run,
    metrics,
    one_iteration,
)
from fakes.training import (
    FakeCountingTrainer,
    load_training_plugins,
    memory_rows,
    metrics_rows,
    run_in_process,
    training_config,
)


def test_run_writes_config_metrics_envs_summary(tmp_path):
    run_dir, _ = make_run(tmp_path)
    assert (run_dir / "config.resolved.yaml").read_text().startswith("run:")
    rows = metrics(run_dir)
    assert [r["iteration"] for r in rows] == [0, 1]
    for key in ("envs_proposed", "envs_valid", "envs_duplicate", "mean_regret",
                "mean_designer_reward", "agent_success_unhinted", "agent_success_hinted",
                "seconds"):
        assert key in rows[0]
    assert rows[0]["envs_proposed"] == 2 and rows[0]["envs_valid"] == 2
    # The scripted agent only succeeds with the hint: regret 1, success 0 vs 1.
    assert rows[0]["mean_regret"] == 1.0
    assert rows[0]["agent_success_unhinted"] == 0.0 and rows[0]["agent_success_hinted"] == 1.0
    assert {"design", "validate", "hint", "rollout", "estimate"} <= set(rows[0]["seconds"])
    envs = sorted(run_dir.glob("envs/*.json"))
    assert len(envs) == 2  # the same two documents come back in iteration 1: same programs
    detail = json.loads(envs[0].read_text())
    assert detail["hint"] == "Think, then box the number."  # "The answer is 42." redacted
    assert detail["hint_redacted"] is True
    assert detail["hinted_rewards"] == [1.0] * 3 and detail["unhinted_rewards"] == [0.0] * 3
    assert detail["sample_hinted"]["first_observation"].endswith("\n\nHINT: " + detail["hint"])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 2


def test_each_role_samples_with_its_own_top_p_top_k_and_thinking(tmp_path):
    """Designer, agent and hint calls each carry their role's loop keys (repair turns and
    replays included); unset keys reach the backend as None, i.e. its own settings."""
    plugin = FakeSelfPlayPlugin(texts=["broken doc"], repairable=True)
    one_iteration(tmp_path, plugin, designer_temperature=0.6, designer_top_p=0.95,
                  designer_top_k=20, designer_enable_thinking=True, agent_temperature=0.6,
                  agent_top_p=0.9, agent_top_k=5, agent_enable_thinking=False, hint_top_p=0.8)
    seen = {}
    for role, *settings in plugin.backends[0].sampling:
        seen.setdefault(role, set()).add(repr(settings))
    assert seen == {
        "designer": {repr([0.6, 0.95, 20, {"enable_thinking": True}])},
        "agent": {repr([0.6, 0.9, 5, {"enable_thinking": False}])},
        "hint": {repr([0.3, 0.8, None, None])},
    }
    plugin = FakeSelfPlayPlugin()
    one_iteration(tmp_path / "defaults", plugin)
    assert {tuple(s[2:]) for s in plugin.backends[0].sampling} == {(None, None, None)}


def test_sampling_keys_are_validated(tmp_path):
    from spade_core.errors import ConfigError

    for key, value in [("agent_top_p", 0.0), ("designer_top_p", 1.5), ("hint_top_k", -1),
                       ("designer_enable_thinking", "maybe")]:
        with pytest.raises(ConfigError, match=key):
            one_iteration(tmp_path, FakeSelfPlayPlugin(), **{key: value})


def test_run_dir_that_holds_a_run_is_refused(tmp_path):
    make_run(tmp_path)
    from spade_core.errors import ConfigError

    with pytest.raises(ConfigError, match="already holds a run"):
        make_run(tmp_path)


def test_hook_spade_run_start(tmp_path):
    run_dir, recorder = make_run(tmp_path)
    assert recorder.events[0] == ("run_start", run_dir)


def test_hook_spade_run_end(tmp_path):
    _, recorder = make_run(tmp_path)
    assert recorder.events[-1] == ("run_end", "completed", None)


def test_failed_run_reports_and_keeps_data(tmp_path):
    recorder = RecordingPlugin()

    class Exploding(FakeSelfPlayPlugin):
        from spade_core.hookspecs import hookimpl

        @hookimpl
        def register_difficulty_estimators(self, register):
            from spade_core.interfaces import DifficultyEstimator

            class Boom(DifficultyEstimator):
                def estimate(self, data):
                    raise RuntimeError("estimator exploded")

            register("boom", lambda o, c: Boom())

    loaded = load_test_plugins(Exploding(), designer_plugin, trainers_plugin, recorder)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"]["dir"] = str(tmp_path / "run")
    data["estimator"] = "boom"
    resolved = resolve_config(data, loaded.registry, "test.yaml")
    with pytest.raises(PluginError, match=r"difficulty estimator 'boom' \(plugin '\w+' from "
                                          r"test 0\): estimate\(\) failed: RuntimeError: "
                                          r"estimator exploded"):
        run(resolved, loaded, report=lambda m: None)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "failed" and "estimator exploded" in summary["error"]
    assert recorder.events[-1][:2] == ("run_end", "failed")
    assert (tmp_path / "run" / "config.resolved.yaml").exists()


def test_the_end_of_a_run_is_a_human_summary_with_next_steps(tmp_path):
    from spade_core.selfplay.run_loop import end_message

    done = end_message({"status": "completed", "error": None, "iterations_completed": 2,
                        "seconds": 452.4, "envs_proposed": 8, "envs_valid": 7,
                        "envs_played": 10, "envs_mastered": 1}, tmp_path, 2)
    assert done.splitlines() == [
        "spade: run completed after 2 of 2 iterations in 7 min 32 s: 8 environments proposed, "
        "7 valid, 10 played, 1 mastered.",
        f"spade: results in {tmp_path} (metrics.jsonl, summary.json, envs/)"]
    assert "{" not in done  # no raw dict
    one = end_message({"status": "completed", "iterations_completed": 1, "seconds": 1.0,
                       "envs_proposed": 1}, tmp_path, 1)
    assert "after 1 of 1 iteration in 1.0 s: 1 environment proposed," in one
    failed = end_message({"status": "failed", "error": "ValueError: x",
                          "iterations_completed": 1, "seconds": 3.0}, tmp_path, 4)
    assert "run failed after 1 of 4 iterations in 3.0 s" in failed
    assert "ValueError" not in failed  # the command prints the error itself, once
    assert f"spade run --resume {tmp_path}" in failed
    # a config or plugin error would happen again: no resume is suggested
    assert "--resume" not in end_message({"status": "failed", "error": "x"}, tmp_path, 4,
                                         resumable=False)


def _broken_estimator_run(run_dir):
    """A run whose difficulty estimator fails to start (a broken plugin), with the messages."""
    from spade_core.hookspecs import hookimpl

    class Broken(FakeSelfPlayPlugin):
        @hookimpl
        def register_difficulty_estimators(self, register):
            def build(options, context):
                raise RuntimeError("cannot load its model")

            register("broken", build)

    recorder = RecordingPlugin()
    loaded = load_test_plugins(Broken(), designer_plugin, trainers_plugin, recorder)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"]["dir"] = str(run_dir)
    data["estimator"] = "broken"
    messages = []
    with pytest.raises(PluginError, match="failed to start: RuntimeError: cannot load its model"):
        run(resolve_config(data, loaded.registry, "test.yaml"), loaded, report=messages.append)
    assert recorder.events[-1][:2] == ("run_end", "failed")
    return messages


def test_a_run_refused_at_start_up_leaves_no_run_directory(tmp_path):
    messages = _broken_estimator_run(tmp_path / "runs" / "first")
    assert not (tmp_path / "runs").exists()  # the run directory and the folder it made
    assert messages[-1] == (f"spade: run refused at start-up; nothing of it is kept "
                            f"({tmp_path / 'runs' / 'first'} is removed); start it again once "
                            "what the error says is fixed")


def test_a_refused_start_up_keeps_the_folders_that_existed_before(tmp_path):
    (tmp_path / "runs" / "first").mkdir(parents=True)  # empty: a run may start in it
    (tmp_path / "runs" / "other-run.txt").write_text("kept")
    messages = _broken_estimator_run(tmp_path / "runs" / "first")
    assert f"nothing of it is kept ({tmp_path / 'runs' / 'first'} is emptied)" in messages[-1]
    assert list((tmp_path / "runs" / "first").iterdir()) == []
    assert (tmp_path / "runs" / "other-run.txt").read_text() == "kept"


def test_a_run_refused_at_start_up_can_be_started_again(tmp_path):
    _broken_estimator_run(tmp_path / "run")
    run_dir, _ = make_run(tmp_path)  # the same directory: nothing is in the way
    assert [r["iteration"] for r in metrics(run_dir)] == [0, 1]


# -- a full disk at each kind of write of a run (the run files, metrics.jsonl, the memory's SQLite,
# a checkpoint, a library's own write): the run ends with a message naming the file and the free
# space, nothing written before is lost, and once space is freed --resume continues to the same
# end as an uninterrupted run. The fake components of fakes.training with the real memory; the
# full disk is fakes.disk.FullDisk.

ITERATIONS = 3


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[list[int], list[tuple]]:
    """What the run leaves without a fault: its iterations and its memory."""
    run_dir = run_in_process(tmp_path_factory.mktemp("whole") / "run", ITERATIONS)
    return [r["iteration"] for r in metrics_rows(run_dir)], memory_rows(run_dir)


def _training_run(run_dir: Path, resume: bool = False) -> list[str]:
    messages: list[str] = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, ITERATIONS), loaded.registry, "t.yaml")
    try:
        run(resolved, loaded, report=messages.append, resume=run_dir if resume else None)
    finally:
        messages.append("(end)")
    return messages


#: Each kind of write: (what fails, how to pick the call, the file the message names).
WRITES = {
    "metrics.jsonl": (lambda disk: disk.fail(
        artifacts, "append_whole",
        lambda path, data, *_: path.name == "metrics.jsonl" and b'"iteration": 1,' in data),
        "1 line of metrics.jsonl ({run}/metrics.jsonl)"),
    "envs/": (lambda disk: disk.fail(
        artifacts, "write_atomic",
        lambda path, data, *_: path.parent.name == "envs" and b'"iteration": 1,' in data),
        "'s details ({run}/envs/"),
    "the memory's SQLite": (lambda disk: disk.fail(
        RecordStore, "_insert_iteration", lambda store, env_id, entry: entry.iteration == 1,
        error=sqlite_full),
        "the environment memory's play of environment"),
    "a checkpoint's memory snapshot": (lambda disk: disk.fail(
        RecordStore, "backup_to", lambda store, target: "iter-000002" in str(target),
        error=sqlite_full),
        "checkpoint iter-000002 ({run}/checkpoints/iter-000002): database or disk is full"),
    "a library's own write": (lambda disk: disk.fail(
        FakeCountingTrainer, "train", lambda trainer, samples: trainer.updates == 1,
        error=lambda: enospc("/scratch/trainer-cache/shard-1.bin")),
        "a file of the run (a plugin's or a library's write) "
        "(/scratch/trainer-cache/shard-1.bin)"),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_full_disk_ends_the_run_plainly_and_a_resume_continues(write, tmp_path, monkeypatch,
                                                                 uninterrupted):
    make_full, named = WRITES[write]
    run_dir = tmp_path / "run"
    disk = make_full(FullDisk(monkeypatch))
    with pytest.raises(DiskFullError) as ended:
        _training_run(run_dir)
    assert disk.hits == 1
    message = str(ended.value)
    assert named.format(run=run_dir) in message, message
    assert "(the disk is full, or a quota or file-size limit was reached)" in message
    assert " free on its disk" in message
    assert message.endswith(f"free space, then continue the run with "
                            f"`spade run --resume {run_dir}`")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["error"] == message
    rows = metrics_rows(run_dir)  # every line whole
    assert [r["iteration"] for r in rows] == list(range(len(rows)))
    disk.free()
    messages = _training_run(run_dir, resume=True)
    assert any("spade: run completed" in m for m in messages), messages
    iterations, memory = uninterrupted
    assert [r["iteration"] for r in metrics_rows(run_dir)] == iterations
    assert memory_rows(run_dir) == memory


def test_a_full_disk_at_a_resumes_start_up_keeps_the_run(tmp_path, monkeypatch, uninterrupted):
    run_dir = tmp_path / "run"
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, 1), loaded.registry, "t.yaml")
    run(resolved, loaded, report=lambda m: None)
    disk = FullDisk(monkeypatch).fail(artifacts, "append_whole",
                                      lambda path, data, *_: path.name == "isolation.jsonl")
    with pytest.raises(DiskFullError, match=r"could not write 1 line of isolation.jsonl"):
        _training_run(run_dir, resume=True)
    assert (run_dir / "checkpoints" / "iter-000001").is_dir()  # a resumed run is never removed
    disk.free()
    _training_run(run_dir, resume=True)
    assert [r["iteration"] for r in metrics_rows(run_dir)] == uninterrupted[0]


def test_the_summary_that_cannot_be_written_does_not_hide_the_error(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    FullDisk(monkeypatch).fail(
        artifacts, "append_whole",
        lambda path, data, *_: path.name == "metrics.jsonl" and b'"iteration": 1,' in data).fail(
        artifacts, "write_atomic", lambda path, data, *_: path.name == "summary.json")
    messages: list[str] = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, ITERATIONS), loaded.registry, "t.yaml")
    with pytest.raises(DiskFullError, match="metrics.jsonl"):
        run(resolved, loaded, report=messages.append)
    [warning] = [m for m in messages if "summary.json not written" in m]
    assert "could not write the run's summary" in warning
    assert f"spade: continue it with: spade run --resume {run_dir}" in messages[-1]


def test_a_full_disk_at_a_fresh_runs_start_up_leaves_nothing(tmp_path, monkeypatch):
    run_dir = tmp_path / "runs" / "first"
    FullDisk(monkeypatch).fail(artifacts, "write_atomic",
                               lambda path, data, *_: path.name == "config.resolved.yaml")
    messages: list[str] = []
    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, ITERATIONS), loaded.registry, "t.yaml")
    with pytest.raises(DiskFullError) as ended:
        run(resolved, loaded, report=messages.append)
    assert str(ended.value).startswith(
        f"could not write the run's resolved config ({run_dir}/config.resolved.yaml)")
    assert str(ended.value).endswith("free space, then run it again")
    assert not (tmp_path / "runs").exists()  # created by this start-up: removed again
    assert "run refused at start-up; nothing of it is kept" in messages[-1]
