"""BFCL multi-turn categories through BFCL's own simulators and ``multi_turn_checker``: the test
fakes score 1.0 / 0.0 / 0.5, hostile call text cannot run anything beyond one simulator method,
BFCL's per-turn step limit, and determinism (items, scores, no simulator state left behind)."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from spade_core.components import BuildContext
from spade_core.interfaces import EvalSettings, EvalSuite, Generation, GenerationBackend
from spade_core.interfaces.eval_suite import first_user_text
from spade_core.testing import load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import FakeGoldBackend, FakeHalfBackend, FakeWrongBackend
from fakes.eval_runs import needs_bfcl, three_ways
from fakes.cli import ROOT

pytestmark = needs_bfcl

SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0)
MULTI_TURN = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
              "multi_turn_long_context"]
UTILS = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils"


@pytest.fixture(autouse=True)
def _sandbox(scoring_sandbox):
    global SANDBOX
    SANDBOX = scoring_sandbox


SANDBOX = None


def _suite(options: dict) -> EvalSuite:
    return load_test_plugins(evals_plugin).registry.build(
        "eval_suite", "bfcl", options, "test", BuildContext(components={"sandbox": SANDBOX}))


def _three_ways(suite: EvalSuite, limit: int) -> tuple[float, ...]:
    return three_ways(suite, limit, SETTINGS)


class CountingBackend(GenerationBackend):
    """Wraps a backend and counts the conversations it is asked to answer."""

    def __init__(self, inner: GenerationBackend) -> None:
        self.inner, self.asked = inner, 0

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        self.asked += len(conversations)
        return self.inner.generate(conversations, max_new_tokens=max_new_tokens,
                                   temperature=temperature, seed=seed, tools=tools)


class ScriptedBackend(GenerationBackend):
    """Answers with fixed replies in order, then with no call (which ends every turn)."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        return [Generation(text=self.replies.pop(0) if self.replies else "<answer>done</answer>")
                for _ in conversations]


def _call(name: str, arguments: dict) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def _leftover_instances() -> list[str]:
    """Simulator instances BFCL's helper left in this process (none: episodes run in workers)."""
    module = sys.modules.get(UTILS)
    return [k for k in vars(module) if k.startswith("spade")] if module else []


def test_multi_turn_base_gold_wrong_half():
    assert _three_ways(_suite({"categories": ["multi_turn_base"]}), 4) == (1.0, 0.0, 0.5)


def test_single_and_multi_turn_categories_together():
    suite = _suite({"categories": ["simple", "multi_turn_base"]})
    items = suite.items(4, 0)
    assert [i.bucket for i in items] == ["simple", "multi_turn_base"] * 2
    assert _three_ways(suite, 4) == (1.0, 0.0, 0.5)


@pytest.mark.parametrize("category", MULTI_TURN)
def test_every_multi_turn_category_scores_its_gold(category):
    suite = _suite({"categories": [category]})
    items = suite.items(3, 0)
    assert [s for s in suite.play(items, FakeGoldBackend(suite.gold(items)), SETTINGS)] == \
        [[1.0]] * 3
    assert suite.play(items, FakeWrongBackend(), SETTINGS) == [[0.0]] * 3


def test_items_follow_bfcl_protocol():
    base, = _suite({"categories": ["multi_turn_base"]}).items(1, 0)
    assert base.id == "multi_turn_base_0" and base.prompt[0]["role"] == "system"
    assert base.prompt[1]["content"].startswith("Move 'final_report.pdf'")
    names = [t["function"]["name"] for t in base.tools]
    assert "mv" in names and "post_tweet" in names  # GorillaFileSystem and TwitterAPI docs
    assert base.tools[0]["function"]["parameters"]["type"] == "object"
    # miss_func: the held-out function is absent at first and comes with BFCL's own prompt.
    suite = _suite({"categories": ["multi_turn_miss_func"]})
    missed, = suite.items(1, 0)
    assert list(missed.data["held_out"]) == ["3"]
    assert [d["name"] for d in missed.data["held_out"]["3"]] == ["sort"]
    assert "sort" not in [t["function"]["name"] for t in missed.tools]
    backend = CountingBackend(FakeGoldBackend(suite.gold([missed])))
    seen: list[list[str]] = []
    inner = backend.generate

    def spy(conversations, **kwargs):
        seen.append([t["function"]["name"] for t in kwargs["tools"]])
        return inner(conversations, **kwargs)

    backend.generate = spy  # type: ignore[method-assign]
    assert suite.play([missed], backend, SETTINGS) == [[1.0]]
    assert "sort" not in seen[0] and "sort" in seen[-1]


class RecordingBackend(ScriptedBackend):
    """A scripted backend that keeps every conversation it was asked to answer."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.seen: list[list[dict]] = []

    def generate(self, conversations, **kwargs):
        self.seen.extend(list(c) for c in conversations)
        return super().generate(conversations, **kwargs)


def _shown_after(backend: RecordingBackend, reply: str) -> str:
    """The message the model was shown right after ``reply``."""
    for conversation in backend.seen:
        for index, message in enumerate(conversation[:-1]):
            if message["role"] == "assistant" and message["content"] == reply:
                return conversation[index + 1]["content"]
    raise AssertionError(f"no conversation continues after {reply!r}")


def test_hostile_argument_arrives_as_a_plain_string(tmp_path):
    marker = tmp_path / "pwned"
    hostile = f'"); import os; os.system("touch {marker}"); ("\' + __import__("os").name + \''
    suite = _suite({"categories": ["multi_turn_base"]})
    item, = suite.items(1, 0)
    reply = _call("echo", {"content": hostile})
    backend = RecordingBackend([reply])
    assert suite.play([item], backend, SETTINGS) == [[0.0]]
    # GorillaFileSystem.echo without a file returns its content: the argument, verbatim.
    shown = _shown_after(backend, reply)
    assert shown.startswith("Tool result:\n")
    assert json.loads(shown.removeprefix("Tool result:\n")) == {"terminal_output": hostile}
    assert not marker.exists()
    assert _leftover_instances() == []  # nothing ran in this process


@pytest.mark.parametrize("name, arguments", [
    ("__import__('os').system", {"command": "true"}),
    ("open", {"file": "x", "mode": "w"}),
    ("mkdir", {"dir_name=__import__('os').getcwd(),x": "a"}),
])
def test_unsafe_calls_are_refused_without_evaluation(name, arguments):
    suite = _suite({"categories": ["multi_turn_base"]})
    item, = suite.items(1, 0)
    reply = _call(name, arguments)
    backend = RecordingBackend([reply])
    suite.play([item], backend, SETTINGS)
    shown = _shown_after(backend, reply)
    assert shown.startswith("Tool result:\nError during execution:") and "not a function" in shown


def test_bfcl_step_limit_force_terminates_the_entry():
    suite = _suite({"categories": ["multi_turn_base"]})
    item, = suite.items(1, 0)
    # A model that calls a tool in every reply: BFCL stops the turn after more than 20 steps and
    # fails the entry (turns missing).
    backend = CountingBackend(FakeWrongBackend())
    assert suite.play([item], backend, SETTINGS) == [[0.0]]
    assert backend.asked == 21
    capped = _suite({"categories": ["multi_turn_base"], "max_steps": 2})
    backend = CountingBackend(FakeWrongBackend())
    assert capped.play([item], backend, SETTINGS) == [[0.0]]
    assert backend.asked == 3


def test_a_model_that_never_calls_fails_and_a_partial_one_too():
    suite = _suite({"categories": ["multi_turn_base"]})
    item, = suite.items(1, 0)
    assert suite.play([item], ScriptedBackend([]), SETTINGS) == [[0.0]]
    gold = list(item.gold)
    first = gold[0].split("\n")
    assert len(first) == 3  # cd, mkdir, mv
    assert suite.play([item], ScriptedBackend(gold), SETTINGS) == [[1.0]]
    assert suite.play([item], ScriptedBackend(["\n".join(first[:2]), *gold[1:]]),
                      SETTINGS) == [[0.0]]  # the file was not moved: state differs


def test_deterministic_for_a_seed_and_nothing_left_behind():
    suite = _suite({"categories": ["multi_turn_base", "multi_turn_miss_param"]})
    items = suite.items(6, 3)
    again = _suite({"categories": ["multi_turn_base", "multi_turn_miss_param"]}).items(6, 3)
    assert [(i.id, i.prompt, i.tools, i.gold) for i in items] == \
        [(i.id, i.prompt, i.tools, i.gold) for i in again]
    base = [i for i in items if i.bucket == "multi_turn_base"]
    settings = EvalSettings(samples=2, max_new_tokens=16, seed=3)
    gold = suite.gold(base)
    first = suite.play(base, FakeHalfBackend(gold), settings)
    assert first == suite.play(base, FakeHalfBackend(gold), settings)
    assert first == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    assert _leftover_instances() == []


def test_entries_beginning_alike_cannot_share_a_gold_table():
    suite = _suite({"categories": ["multi_turn_base"]})
    items = {i.id: i for i in suite.items(None, 0)}
    pair = [items["multi_turn_base_40"], items["multi_turn_base_43"]]
    assert first_user_text(pair[0].prompt) == first_user_text(pair[1].prompt)
    with pytest.raises(ValueError, match="multi_turn_base_40 and multi_turn_base_43"):
        suite.gold(pair)


def test_options_select_multi_turn_categories_and_refuse_bad_ones():
    from spade_core.errors import ConfigError

    from spade_core.eval.evaluate import resolve_suite

    registry = load_test_plugins(evals_plugin).registry
    _, options = resolve_suite(registry, "bfcl", {"categories": ["multi_turn_base"],
                                                  "max_steps": 5})
    assert options.categories == ["multi_turn_base"] and options.max_steps == 5
    assert resolve_suite(registry, "bfcl", {})[1].categories == [
        "simple", "multiple", "parallel", "parallel_multiple", "irrelevance"]
    with pytest.raises(ConfigError, match="max_steps"):
        resolve_suite(registry, "bfcl", {"max_steps": 0})
    with pytest.raises(ConfigError, match="categories.0"):
        resolve_suite(registry, "bfcl", {"categories": ["multi_turn_composite"]})


@pytest.mark.slow
def test_multi_turn_on_the_bundled_model():
    """Two two-turn TradingBot entries (one tool set, so one batched call per step) played by the
    bundled model through the quickstart config's backend, BFCL's step limit lowered to 1."""
    from spade_core.components import BuildContext
    from spade_core.config.load import load_config
    from spade_core.plugins import load_plugins

    resolved = load_config(str(ROOT / "configs" / "quickstart.yaml"), load_plugins().registry,
                           ["backend.options.torch_threads=1"])
    component = resolved.components["backend"]
    backend = component.component.build(component.options, BuildContext(
        seed=0, model=resolved.config.model.path, success_threshold=1.0))
    suite = _suite({"categories": ["multi_turn_base"], "max_steps": 1})
    items = [i for i in suite.items(None, 0) if i.id in ("multi_turn_base_100",
                                                         "multi_turn_base_104")]
    counting = CountingBackend(backend)
    try:
        scores = suite.play(items, counting, EvalSettings(max_new_tokens=48, seed=0))
    finally:
        backend.close()
    assert len(scores) == 2 and all(s in ([0.0], [1.0]) for s in scores)
    assert 4 <= counting.asked <= 8  # 2 entries x 2 turns x (1 or 2 steps)
    assert _leftover_instances() == []
