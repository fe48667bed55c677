"""The hint step (spade_core.selfplay.hinting): diagnostics, the hints backend and prompt, through
the real loop with fake backend, sandbox, memory and corpus."""

from __future__ import annotations

import copy
import json

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.config.load import resolve_config
from spade_core.selfplay.runner import run
from spade_core.testing import load_test_plugins

from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin, make_run, metrics


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
