"""The hint step (spade_core.selfplay.hinting): ``hint()`` on fake sessions (first observations,
the solution kept out of the hint, failed resets rejected, replays keeping their hint); then
diagnostics, the hints backend and prompt, through the real loop with fake backend, sandbox,
memory and corpus."""

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
from spade_core.records import EnvStatus
from spade_core.selfplay.hinting import hint
from spade_core.selfplay.play import play_sessions
from spade_core.selfplay.run_loop import run
from spade_core.testing import load_test_plugins

from fakes.selfplay import (
    FAKE_RUN_CONFIG,
    FakeInProcessSandbox,
    FakeScriptedBackend,
    FakeSelfPlayPlugin,
    accepted_proposal,
    make_run,
    metrics,
    qa_program,
)


def _components(**extra):
    return SimpleNamespace(sandbox=FakeInProcessSandbox(), backend=FakeScriptedBackend(),
                           hint_backend=None, hint_prompt="single", **extra)


def test_hint_reads_first_observations_writes_hints_and_rejects_what_fails_to_open():
    c, loop = _components(), LoopSection(rollouts_per_env=2)
    good = accepted_proposal(qa_program("six times seven"))
    broken = accepted_proposal("class BrokenEnv:\n    def __init__(self):\n"
                               "        raise ValueError('no')\n", index=1)
    timer = PhaseTimer()
    with play_sessions(c, loop, [good, broken], hinted=True) as tables:
        hint(c, loop, tables, seed=3, timer=timer)
    assert good.first_observation == "Question: six times seven"
    assert good.solution == ["\\boxed{42}"] and "42" in good.secrets
    # The scripted hint gives the answer away: that sentence is dropped.
    assert good.hint == "Think, then box the number." and good.hint_redacted
    assert good.hint_diagnostics.source == "model"
    assert broken.status == EnvStatus.REJECTED and broken.verdict.category == "runtime_error"
    assert broken.hint == "" and len(c.backend.hint_prompts) == 1
    assert "hint" in timer.seconds


def test_no_hint_is_written_without_hinted_plays_and_a_replay_keeps_its_hint():
    c, loop = _components(), LoopSection(rollouts_per_env=2)
    replay = accepted_proposal(qa_program("forty two"))
    replay.replayed, replay.hint = True, "Kept from its first play."
    fresh = accepted_proposal(qa_program("six times seven"), index=1)
    with play_sessions(c, loop, [replay, fresh], hinted=False) as tables:
        hint(c, loop, tables, seed=0, timer=PhaseTimer())
    assert fresh.first_observation and fresh.hint == ""
    with play_sessions(c, loop, [replay], hinted=True) as tables:
        hint(c, loop, tables, seed=0, timer=PhaseTimer())
    assert replay.hint == "Kept from its first play." and c.backend.hint_prompts == []


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
