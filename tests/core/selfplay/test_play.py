"""Playing sessions (spade_core.selfplay.play): ``play()`` on fake sessions (K unhinted and H
hinted episodes on the same seeds, the hint judged); then, through the real loop, a sandbox worker
killed or out of memory mid-batch, and failed plays dropped or counted as zero."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.config.load import resolve_config
from spade_core.config.schema import LoopSection
from spade_core.phases import PhaseTimer
from spade_core.checkpoint_files import latest_checkpoint
from spade_core.selfplay.hinting import hint
from spade_core.selfplay.play import play, play_sessions
from spade_core.selfplay.run_loop import run
from spade_core.testing import load_test_plugins

from fakes.selfplay import (
    FAKE_RUN_CONFIG,
    FakeInProcessSandbox,
    FakeScriptedBackend,
    FakeSelfPlayPlugin,
    accepted_proposal,
    metrics,
    qa_program,
)
from fakes.training import memory_rows, training_config


@pytest.mark.parametrize("hinted, hint_plays", [(True, 2), (False, 0)])
def test_play_rolls_out_unhinted_and_hinted_episodes_on_the_same_seeds(hinted, hint_plays):
    """The scripted agent is right only when it was given a hint: unhinted plays lose, hinted
    ones win, and the hint is judged against them (it helped)."""
    c = SimpleNamespace(sandbox=FakeInProcessSandbox(), backend=FakeScriptedBackend(),
                        hint_backend=None, hint_prompt="single")
    loop = LoopSection(rollouts_per_env=3, hint_plays_per_env=2, max_turns=1)
    p = accepted_proposal(qa_program("six times seven"))
    timer = PhaseTimer()
    with play_sessions(c, loop, [p], hinted=hinted) as tables:
        hint(c, loop, tables, seed=10, timer=timer)
        play(c, loop, tables, seed=10, timer=timer)
    assert [(e.seed, e.reward, e.hinted) for e in p.unhinted] == [
        (10, 0.0, False), (11, 0.0, False), (12, 0.0, False)]
    assert [(e.seed, e.reward, e.hinted) for e in p.hinted] == [
        (10, 1.0, True), (11, 1.0, True)][:hint_plays]
    assert len(p.conversations) == 3 + hint_plays and p.failed == []
    if hinted:
        assert p.hint_diagnostics.hurt is False and p.hint_diagnostics.contradicts is None
    assert "rollout" in timer.seconds


_POOL_ENV = '''
class QAEnv:
    def reset(self, seed=None):
        return "Question: what is {q}?", {{}}

    def step(self, action):
        {before}
        ok = action.strip() == "\\\\boxed{{42}}"
        return ("correct" if ok else "wrong"), (1.0 if ok else 0.0), True, False, {{}}

    def solution(self):
        return "\\\\boxed{{42}}"
'''


class _KillingSandboxPlugin:
    """The real ``process`` sandbox, whose first batched step has the worker of the program
    marked ``VICTIM`` killed (SIGKILL, through the fork server) just as the batch is sent."""

    from spade_core.hookspecs import hookimpl

    @hookimpl
    def register_sandboxes(self, register):
        from sandbox.options import ProcessSandboxOptions
        from sandbox.plugin import build_sandbox
        from spade_core.interfaces import Sandbox

        class Killing(Sandbox):
            def __init__(self, real):
                self.real, self.victims, self.killed = real, [], 0

            def isolation(self):
                return self.real.isolation()

            def open(self, program, *, family=None):
                return self.real.open(program, family=family)

            def open_many(self, program, count, *, family=None):
                sessions = self.real.open_many(program, count, family=family)
                if "VICTIM" in program:
                    self.victims += sessions
                return sessions

            def reset_many(self, items):
                return self.real.reset_many(items)

            def step_many(self, items):
                victims = {id(v) for v in self.victims}
                mine = [s for s, _ in items if id(s) in victims]
                if not self.killed and mine:
                    channel = mine[0].link.channel
                    channel.kill()
                    import select

                    # dead once its end of the socket is closed (end of file: readable)
                    assert select.select([channel.fileno()], [], [], 10)[0]
                    self.killed += 1
                return self.real.step_many(items)

            def close(self):
                self.real.close()

        register("killing-process",
                 lambda options, context: Killing(build_sandbox(options, context)),
                 ProcessSandboxOptions)


def test_a_worker_killed_or_out_of_memory_mid_batch_ends_its_episodes_and_the_run_goes_on(
        tmp_path):
    import envmemory.plugin as envmemory_plugin
    import sandbox.plugin as sandbox_plugin

    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "good.py").write_text(_POOL_ENV.format(q="six times seven", before="pass"))
    (pool / "victim.py").write_text(_POOL_ENV.format(q="forty two", before="pass  # VICTIM"))
    (pool / "hog.py").write_text(_POOL_ENV.format(
        q="eighty-four halved",  # out of memory on a wrong answer (every unhinted one)
        before="hog = bytearray(8 * 1024 ** 3) if '7' in action else None"))
    loaded = load_test_plugins(FakeSelfPlayPlugin(), designer_plugin, estimators_plugin,
                               trainers_plugin, envmemory_plugin, sandbox_plugin,
                               _KillingSandboxPlugin())
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=2)
    data["loop"] = {"envs_per_iteration": 3, "rollouts_per_env": 2, "max_turns": 1,
                    "mode": "fixed-pool", "pool": str(pool)}
    data["sandbox"] = {"plugin": "killing-process",
                       "options": {"workers": 1, "memory_mb": 512}}
    data["memory"] = {"plugin": "faiss", "options": {"embedder": "hashing",
                                                     "mastery_rollouts": 2,
                                                     "too_hard_rollouts": 50}}
    run_dir = run(resolve_config(data, loaded.registry, "test.yaml"), loaded,
                  report=lambda message: None)
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [0, 1] and all(r["envs_played"] == 3 for r in rows)
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "completed"
    envs = {json.loads(p.read_text())["doc_text"]: json.loads(p.read_text())
            for p in (run_dir / "envs").glob("*.json")}
    # an unhinted play that failed is dropped (loop.failed_plays: drop) and kept apart
    errors = {text: [(d["sample_unhinted"] or d["failed_unhinted"][0])["error"],
                     d["sample_hinted"]["error"]] for text, d in envs.items()}
    victim = next(e for t, e in errors.items() if "victim" in t)
    assert any(e and "the worker was killed" in e for e in victim), errors
    hog = next(e for t, e in errors.items() if "hog" in t)
    assert all(e and "ran out of memory (limit 512 MB)" in e for e in hog), errors
    good = next(e for t, e in errors.items() if "good" in t)
    assert good == [None, None]


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
    import plugins.difficulty_estimators as estimators_plugin
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
