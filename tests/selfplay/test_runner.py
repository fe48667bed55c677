"""The self-play loop's wiring and bookkeeping, with fake backend, sandbox, memory and corpus.

The real model, sandbox and memory run in tests/selfplay/test_e2e.py.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.config.load import resolve_config
from spade_core.errors import PluginError
from spade_core.selfplay.runner import run
from spade_core.testing import load_test_plugins

from fakes.selfplay import (
    FAKE_RUN_CONFIG,
    FakeSelfPlayPlugin,
    RecordingPlugin,
    metrics,
    one_iteration,
)


def make_run(tmp_path, overrides=None, **plugin_kwargs):
    recorder = RecordingPlugin()
    loaded = load_test_plugins(FakeSelfPlayPlugin(**plugin_kwargs), designer_plugin,
                               estimators_plugin, trainers_plugin, recorder)
    assert not [p.error for p in loaded.plugins if p.error]
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"]["dir"] = str(tmp_path / "run")
    for key, value in (overrides or {}).items():
        data[key] = value
    resolved = resolve_config(data, loaded.registry, "test.yaml")
    run_dir = run(resolved, loaded, report=lambda message: None)
    return run_dir, recorder


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


@pytest.mark.parametrize("estimator,expected", [
    ("regret", 1.0), ("blend", 0.4 * 1.0 + 0.6 * 0.0), ("learnability", 0.0),
    ("solve-rate", 0.0), ("learning-progress-per-step", 1.0), ("frontier", 0.0),
    # Per skill (the reference's trackers): no earlier mean, baseline 0, unhinted mean 0.
    ("learning-progress", 0.0),
    # Per environment: a first play is a cold start, max(regret, 0).
    ({"plugin": "learning-progress", "options": {"baseline": "environment"}}, 1.0),
], ids=["regret", "blend", "learnability", "solve-rate", "lp-per-step", "frontier", "lp-skill",
        "lp-environment"])
def test_switching_estimator_changes_designer_reward(tmp_path, estimator, expected):
    run_dir, _ = make_run(tmp_path, {"estimator": estimator})
    assert metrics(run_dir)[0]["mean_designer_reward"] == pytest.approx(expected)


def test_invalid_proposals_get_invalid_reward_and_are_kept(tmp_path):
    run_dir, recorder = make_run(tmp_path, texts=["broken doc"])
    row = metrics(run_dir)[0]
    # Nothing was played, so nothing was estimated: the progress says 0 of 0, not 2 of 2.
    estimated = [e for e in recorder.events if e[0] == "phase_progress" and e[2] == "estimate"]
    assert estimated and all(e[3:] == (0, 0) for e in estimated)
    assert row["envs_valid"] == 0 and row["designer_attempts"] == 4  # 2 envs x 2 attempts
    assert row["mean_designer_reward"] == -0.5
    detail = json.loads(next(run_dir.glob("envs/*.json")).read_text())
    assert detail["status"] == "rejected" and detail["verdict"]["category"] == "syntax"


def test_a_repair_turn_turns_a_rejected_program_into_a_valid_one(tmp_path):
    plugin = FakeSelfPlayPlugin(texts=["broken doc"], repairable=True)
    run_dir = one_iteration(tmp_path, plugin)
    row = metrics(run_dir)[0]
    assert row["envs_valid"] == 2 and row["repairs"] == 2 and row["repaired_valid"] == 2
    assert row["designer_attempts"] == 4
    first, second = plugin.backends[0].designer_prompts[:3:2]
    assert second[:len(first)] == first  # the repair continues the first conversation
    assert second[-2]["role"] == "assistant" and second[-2]["content"] == "I cannot do that."
    assert "[syntax] no environment program found" in second[-1]["content"]
    detail = json.loads(next(run_dir.glob("envs/*.json")).read_text())
    assert detail["repairs"] == 1 and detail["attempt_categories"] == ["syntax", "ok"]


def test_without_repairs_a_retry_samples_the_first_prompt_again(tmp_path):
    plugin = FakeSelfPlayPlugin(texts=["broken doc"], repairable=True)
    run_dir = one_iteration(tmp_path, plugin, max_repairs=0)
    row = metrics(run_dir)[0]
    assert row["envs_valid"] == 0 and row["repairs"] == 0
    prompts = plugin.backends[0].designer_prompts
    assert prompts[0] == prompts[2]


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


def test_mastered_env_then_refused_as_duplicate(tmp_path):
    loop = dict(FAKE_RUN_CONFIG["loop"], schedule="frontier")
    run_dir, recorder = make_run(tmp_path, {"loop": loop}, always_right=True, texts=["same doc"])
    rows = metrics(run_dir)
    assert rows[0]["envs_mastered"] >= 1
    assert rows[1]["envs_duplicate"] == 2 and rows[1]["envs_played"] == 0
    assert any(e[0] == "env_mastered" for e in recorder.events)


def test_run_dir_that_holds_a_run_is_refused(tmp_path):
    make_run(tmp_path)
    from spade_core.errors import ConfigError

    with pytest.raises(ConfigError, match="already holds a run"):
        make_run(tmp_path)


def test_hook_spade_run_start(tmp_path):
    run_dir, recorder = make_run(tmp_path)
    assert recorder.events[0] == ("run_start", run_dir)


def test_hook_spade_iteration_end(tmp_path):
    _, recorder = make_run(tmp_path)
    ends = [e for e in recorder.events if e[0] == "iteration_end"]
    assert [e[1] for e in ends] == [0, 1] and "mean_regret" in ends[0][2]


def test_hook_spade_phase_progress(tmp_path):
    _, recorder = make_run(tmp_path)
    progress = [e for e in recorder.events if e[0] == "phase_progress" and e[1] == 0]
    phases = {e[2] for e in progress}
    assert {"sample", "design", "validate", "dedupe", "hint", "rollout", "estimate",
            "train"} <= phases
    rollout = [e for e in progress if e[2] == "rollout"]
    # 2 environments x 3 seeds, hinted and unhinted: the bar ends full and never goes back.
    assert rollout[-1][3:] == (12, 12)
    assert [e[3] for e in rollout] == sorted(e[3] for e in rollout)
    for phase in phases:
        last = [e for e in progress if e[2] == phase][-1]
        assert last[4] is None or last[3] <= last[4], last


def test_hook_spade_env_accepted(tmp_path):
    _, recorder = make_run(tmp_path)
    assert len([e for e in recorder.events if e[0] == "env_accepted"]) == 4


def test_hook_spade_env_mastered(tmp_path):
    _, recorder = make_run(tmp_path)
    assert not [e for e in recorder.events if e[0] == "env_mastered"]  # regret 1: not mastered
    _, recorder = make_run(tmp_path / "b", always_right=True)
    assert [e for e in recorder.events if e[0] == "env_mastered"]


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


def _regret_in_figures_only():
    from spade_core.records import Difficulty

    return Difficulty(figures={"regret": 0.5}, designer_reward=0.0)  # no fallback: TypeError


def _nan_regret():
    from spade_core.records import Difficulty

    return Difficulty(figures={}, designer_reward=0.0, regret=float("nan"))


@pytest.mark.parametrize("difficulty,says", [
    (_regret_in_figures_only, r"estimate\(\) failed: TypeError: .*regret"),
    (_nan_regret, r"estimate\(\) returned regret=nan; an estimate must be a Difficulty whose "
                  r"regret is a finite number"),
])
def test_a_missing_regret_names_the_estimator_once_and_suggests_no_resume(tmp_path, difficulty,
                                                                            says):
    class NoRegret(FakeSelfPlayPlugin):
        from spade_core.hookspecs import hookimpl

        @hookimpl
        def register_difficulty_estimators(self, register):
            from spade_core.interfaces import DifficultyEstimator

            class Forgetful(DifficultyEstimator):
                def estimate(self, data):
                    return difficulty()

            register("forgetful", lambda o, c: Forgetful())

    loaded = load_test_plugins(NoRegret(), designer_plugin, trainers_plugin,
                               distribution="spade-forgetful")
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"]["dir"] = str(tmp_path / "run")
    data["estimator"] = "forgetful"
    said = []
    with pytest.raises(PluginError) as err:
        run(resolve_config(data, loaded.registry, "test.yaml"), loaded, report=said.append)
    assert re.match(r"difficulty estimator 'forgetful' \(plugin '\w+' from spade-forgetful "
                    r"0\): " + says, str(err.value))
    assert "Forgetful" not in str(err.value)  # the registered name, not the Python class
    end = said[-1]
    assert "spade: run failed after 0 of 2 iterations" in end
    assert "estimate()" not in end and "error" not in end  # the caller prints it, once
    assert "--resume" not in end  # a resume would meet the same estimator


def test_hint_that_gives_the_answer_away_is_redacted():
    from spade_core.selfplay.hints import redact_leaks, secrets_of

    secrets = secrets_of(["\\boxed{42}"])
    assert secrets == ["\\boxed{42}", "42"]
    hint, redacted = redact_leaks("Multiply the numbers. The answer is 42. Box it.", secrets)
    assert redacted and hint == "Multiply the numbers. Box it."
    hint, redacted = redact_leaks("Use 420 as a bound.", secrets)  # whole words only
    assert not redacted
    hint, redacted = redact_leaks("It is 42.", secrets)
    assert redacted and hint == "Read the task carefully and answer in the requested format."


# -- hints: instructions, backend, diagnostics (issue 25) ---------------------------------------

def test_a_hint_that_contradicts_the_programs_answer_is_counted(tmp_path):
    from fakes.selfplay import FakeCheckingFamily

    # The program's answer is 42; the hint says 7 (not a leak, so not redacted).
    run_dir, _ = make_run(tmp_path, family=FakeCheckingFamily,
                          hint="Multiply the numbers. The answer is 7.")
    row = metrics(run_dir)[0]
    assert (row["hints"], row["hints_checked"], row["hints_contradict"]) == (2, 2, 2)
    assert row["hints_redacted"] == 0 and row["hints_hurt"] == 0
    detail = json.loads(sorted(run_dir.glob("envs/*.json"))[0].read_text())
    assert detail["hint_diagnostics"] == {"source": "model", "redacted": False, "hurt": False,
                                          "contradicts": True}


def test_a_hint_the_family_cannot_check_is_counted_as_unchecked(tmp_path):
    run_dir, _ = make_run(tmp_path)  # FakeFamily: the default, "cannot tell"
    row = metrics(run_dir)[0]
    assert (row["hints"], row["hints_redacted"], row["hints_checked"]) == (2, 2, 0)
    detail = json.loads(sorted(run_dir.glob("envs/*.json"))[0].read_text())
    assert detail["hint_diagnostics"]["contradicts"] is None
    assert detail["hint_diagnostics"]["redacted"] is True


def test_hints_backend_writes_the_hints_and_the_policy_writes_none(tmp_path):
    plugin = FakeSelfPlayPlugin()
    loaded = load_test_plugins(plugin, designer_plugin, estimators_plugin, trainers_plugin)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=1)
    data["hints"] = {"backend": "fake-hint-backend"}
    resolved = resolve_config(data, loaded.registry, "test.yaml")
    assert resolved.to_dict()["hints"]["backend"] == {"plugin": "fake-hint-backend",
                                                      "options": {}}
    run_dir = run(resolved, loaded, report=lambda message: None)
    (policy,), (hinter,) = plugin.backends, plugin.hint_backends
    assert policy.hint_prompts == [] and len(hinter.hint_prompts) == 2
    detail = json.loads(sorted(run_dir.glob("envs/*.json"))[0].read_text())
    assert detail["hint"] == "Count carefully, then box it."


@pytest.mark.parametrize("prompt", ["family", "single"])
def test_hints_prompt_picks_the_familys_instructions_or_the_single_prompt(tmp_path, prompt):
    from spade_core.hint_prompts import GAME_HINT_SYSTEM, HINT_SYSTEM

    plugin = FakeSelfPlayPlugin()
    make_run_with = load_test_plugins(plugin, designer_plugin, estimators_plugin, trainers_plugin)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=1)
    data["hints"] = {"prompt": prompt}
    run(resolve_config(data, make_run_with.registry, "test.yaml"), make_run_with,
        report=lambda message: None)
    systems = {m[0]["content"] for m in plugin.backends[0].hint_prompts}
    assert systems == {GAME_HINT_SYSTEM if prompt == "family" else HINT_SYSTEM}


def test_answer_claims_and_contradictions():
    from spade_core.selfplay.hints import answer_claims, contradicts_answer, hint_hurt

    hint = ("The answer is yes. Put \\boxed{7} or <answer><order_id></answer>. "
            "The answer is a whole number. The answer format is one word.")
    assert answer_claims(hint) == ["7", "yes"]
    same = str.__eq__
    assert contradicts_answer("The answer is yes.", ["\\boxed{no}"], same) is True
    assert contradicts_answer("Box it: \\boxed{no}.", ["\\boxed{no}"], same) is False
    assert contradicts_answer("Count the vowels.", ["\\boxed{no}"], same) is None
    assert contradicts_answer("The answer is yes.", None, same) is None
    assert hint_hurt([0.0, 1.0], [1.0, 1.0]) is True and hint_hurt([1.0], [1.0]) is False
    assert hint_hurt([], [1.0]) is None


# -- faults: a sandbox worker killed or out of memory in the middle of a batch -----------------

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
