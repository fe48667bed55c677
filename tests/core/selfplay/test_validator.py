"""The optional LLM validator (``validation.llm``) through the real loop with scripted fake
backends, and its verdict rule (issue 25)."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.config.load import resolve_config
from spade_core.interfaces import GenerationBackend
from spade_core.records import Verdict
from spade_core.selfplay.run_loop import run
from spade_core.selfplay.validator import LLMValidator, accepts, llm_validate
from spade_core.testing import load_test_plugins
from spade_core.validator_prompts import GAME_VALIDATOR_SYSTEM, TOOL_USE_VALIDATOR_SYSTEM

from fakes.selfplay import FAKE_RUN_CONFIG, FakeFamily, FakeSelfPlayPlugin, metrics


def validated_run(tmp_path, plugin, llm):
    loaded = load_test_plugins(plugin, designer_plugin, estimators_plugin, trainers_plugin)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=1)
    data["validation"] = {"llm": llm}
    resolved = resolve_config(data, loaded.registry, "test.yaml")
    run_dir = run(resolved, loaded, report=lambda message: None)
    envs = {json.loads(p.read_text())["doc_id"]: json.loads(p.read_text())
            for p in run_dir.glob("envs/*.json")}
    return resolved, metrics(run_dir)[0], envs


def test_a_rejected_program_gets_the_verdict_and_is_tried_again(tmp_path):
    judged = []

    def validator(program):  # rejects the first program about "six times seven", once
        judged.append(program)
        rejected = "six times seven" in program and sum("six times seven" in p for p in judged) == 1
        return "Step 1 is unreachable.\n\\boxed{no}" if rejected else "Fine.\n\\boxed{yes}"

    plugin = FakeSelfPlayPlugin(validator=validator)
    _, row, envs = validated_run(tmp_path, plugin, {"enabled": True})
    (policy,) = plugin.backends
    assert len(policy.validator_prompts) == 3 and len(judged) == 3
    assert (row["validator_accepted"], row["validator_rejected"]) == (2, 1)
    assert row["designer_attempts"] == 3 and row["envs_valid"] == 2
    retried = next(e for e in envs.values() if e["attempts"] == 2)
    assert retried["attempt_categories"] == ["llm_rejected", "ok"]
    assert retried["verdict"]["details"]["llm_validator"] == "accepted"
    # The rejection went back to the designer as a repair turn, with the validator's reasons.
    repair = policy.designer_prompts[-1][-1]["content"]
    assert "LLM validator" in repair and "Step 1 is unreachable." in repair
    # The validator's sampling: temperature 0.3, top-p 0.9, no chat template override.
    assert {s[1:] for s in policy.sampling if s[0] == "validator"} == {(0.3, 0.9, None, None)}
    system, user = policy.validator_prompts[0]
    assert system["content"] == GAME_VALIDATOR_SYSTEM and "class QAEnv" in user["content"]


def test_its_own_backend_judges_and_a_reply_without_a_verdict_accepts(tmp_path):
    plugin = FakeSelfPlayPlugin()
    resolved, row, envs = validated_run(
        tmp_path, plugin, {"enabled": True, "backend": "fake-validator-backend",
                           "temperature": 0.0, "top_p": None, "max_tokens": 64})
    assert resolved.to_dict()["validation"]["llm"]["backend"] == {
        "plugin": "fake-validator-backend", "options": {}}
    (policy,), (judge,) = plugin.backends, plugin.validator_backends
    assert policy.validator_prompts == [] and len(judge.validator_prompts) == 2
    assert {s[1:3] for s in judge.sampling} == {(0.0, None)}
    assert (row["validator_accepted"], row["validator_rejected"]) == (2, 0)
    assert {e["verdict"]["details"]["llm_validator"] for e in envs.values()} == {
        "no verdict in the reply: accepted"}


def test_off_by_default_no_validator_call(tmp_path):
    plugin = FakeSelfPlayPlugin()
    _, row, _ = validated_run(tmp_path, plugin, {"backend": "fake-validator-backend"})
    assert plugin.backends[0].validator_prompts == [] and plugin.validator_backends == []
    assert (row["validator_accepted"], row["validator_rejected"]) == (0, 0)


@pytest.mark.parametrize("reply, ok", [
    ("\\boxed{yes}", True), ("\\boxed{ Y }", True), ("so \\boxed{True}.", True),
    ("\\boxed{no}", False), ("\\boxed{maybe}", False), ("\\boxed{no} then \\boxed{yes}", False),
    ("", True), ("no verdict here", True), ("\\boxed{}", True), ("\\boxed{ }", True),
])
def test_the_verdict_is_the_first_box(reply, ok):
    assert accepts(reply) is ok


class FakeFailingBackend(GenerationBackend):
    def generate(self, conversations, **kwargs):
        raise RuntimeError("server gone")


def test_a_failed_validator_call_accepts():
    proposal = SimpleNamespace(program="class XEnv: ...", family=FakeFamily(),
                               verdict=Verdict(True, "ok", "valid"), validator_verdicts=[])
    llm_validate(LLMValidator(), FakeFailingBackend(), [proposal], seed=0)
    assert proposal.verdict.valid and proposal.validator_verdicts == [True]
    assert proposal.verdict.details["llm_validator"].startswith(
        "the call failed (RuntimeError: server gone)")


def test_the_tool_use_family_audits_solvability():
    from spade_core.plugins import load_plugins

    family = load_plugins().registry.build("env_family", "tool-use", {}, "test")
    assert family.validator_instructions() == TOOL_USE_VALIDATOR_SYSTEM
    assert FakeFamily().validator_instructions() == GAME_VALIDATOR_SYSTEM


