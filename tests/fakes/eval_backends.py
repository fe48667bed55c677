"""Named fake backends for testing eval suites through their real scorers: one answers every
item with its gold replies, one always wrongly, one right on every other item. Build them from a
suite's :meth:`~spade_core.interfaces.EvalSuite.gold` table."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from spade_core.hookspecs import hookimpl
from spade_core.interfaces import Generation, GenerationBackend
from spade_core.interfaces.eval_suite import first_user_text
from spade_core.testing import load_builtin_plugins

WRONG_TEXT = "spade-wrong-answer"


class FakeGoldBackend(GenerationBackend):
    """Replies with the gold reply of the item it recognises by its first user message (turn by
    turn for multi-turn items: the ``n``-th reply for the ``n``-th assistant turn)."""

    def __init__(self, gold: Mapping[str, Sequence[str]]) -> None:
        self.gold = {key: tuple(replies) for key, replies in gold.items()}

    def reply(self, conversation: Sequence[dict[str, Any]],
              tools: list[dict[str, Any]] | None) -> str:
        replies = self.gold.get(first_user_text(conversation))
        if not replies:
            return wrong_reply(tools)
        turn = sum(1 for m in conversation if m.get("role") == "assistant")
        return replies[min(turn, len(replies) - 1)]

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        return [Generation(text=self.reply(c, tools)) for c in conversations]


class FakeWrongBackend(GenerationBackend):
    """Always wrong: a junk boxed answer, or with tools a call to the first tool without
    arguments (so irrelevance items fail too)."""

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        return [Generation(text=wrong_reply(tools)) for _ in conversations]


class FakeHalfBackend(FakeGoldBackend):
    """Gold on the items it sees first, third, fifth... (by first user message, in order of
    first appearance), wrong on the others: half right for an even number of items."""

    def __init__(self, gold: Mapping[str, Sequence[str]]) -> None:
        super().__init__(gold)
        self.order: dict[str, int] = {}

    def reply(self, conversation, tools):
        key = first_user_text(conversation)
        position = self.order.setdefault(key, len(self.order))
        return super().reply(conversation, tools) if position % 2 == 0 else wrong_reply(tools)


def wrong_reply(tools: list[dict[str, Any]] | None) -> str:
    if tools:
        name = tools[0].get("function", tools[0]).get("name", "tool")
        return "<tool_call>" + json.dumps({"name": name, "arguments": {}}) + "</tool_call>"
    return "\\boxed{" + WRONG_TEXT + "}"


class FakeEvenSeedBackend(FakeGoldBackend):
    """Gold when asked with an even seed, wrong with an odd one: sample ``j`` of a suite's
    default ``play`` uses seed ``seed + j``, so over an even number of samples every item scores
    half (avg@k 0.5) and pass@k is 1."""

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        if (seed or 0) % 2:
            return [Generation(text=wrong_reply(tools)) for _ in conversations]
        return super().generate(conversations, max_new_tokens=max_new_tokens,
                                temperature=temperature, seed=seed, tools=tools)


class FakeScenarioUser(GenerationBackend):
    """A scripted τ²-bench customer: opens with its task's scenario (the ``<scenario>`` of its
    system prompt, which the tau2 suite's gold table is keyed by), then ends the conversation
    with ``###STOP###`` at the agent's next message. With ``script`` (the suite's
    ``user_gold``: replies by scenario) it says the ``n``-th reply of its task's script at its
    ``n``-th turn instead (telecom's customer calls their own tools)."""

    def __init__(self, script: Mapping[str, Sequence[str]] | None = None) -> None:
        self.script = {key: tuple(replies) for key, replies in (script or {}).items()}
        self.asked = 0

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        self.asked += len(conversations)
        return [Generation(text=self.reply(c)) for c in conversations]

    def reply(self, conversation: Sequence[dict[str, Any]]) -> str:
        system = conversation[0]["content"]
        start = system.index("<scenario>\n") + len("<scenario>\n")
        scenario = system[start:system.rindex("\n</scenario>")]
        turn = sum(1 for m in conversation if m["role"] == "assistant")
        replies = self.script.get(scenario)
        if replies:
            return replies[min(turn, len(replies) - 1)]
        return "Thank you. ###STOP###" if turn else scenario


class FakeEvenEpisodeBackend(GenerationBackend):
    """For a reasoning-gym suite over ``FakeItemsSandbox`` (tests/fakes/in_process.py): answers
    ``<answer>d-s</answer>`` to the item ``"d episode s"`` when ``s`` is even, a wrong answer
    otherwise, so every dataset of the reference protocol (episodes 0..7) wins half."""

    def __init__(self) -> None:
        self.asked = 0

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        import re

        replies = []
        for conversation in conversations:
            self.asked += 1
            found = re.search(r"(\w+) episode (\d+)", first_user_text(conversation))
            if found and int(found.group(2)) % 2 == 0:
                replies.append(f"<answer>{found.group(1)}-{found.group(2)}</answer>")
            else:
                replies.append("<answer>" + WRONG_TEXT + "</answer>")
        return [Generation(text=text) for text in replies]


class FakeTemperatureBackend(FakeWrongBackend):
    """Always wrong, and records the temperature of every call (``temperatures``)."""

    def __init__(self) -> None:
        self.temperatures: list[float] = []

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        self.temperatures.append(temperature)
        return super().generate(conversations, max_new_tokens=max_new_tokens,
                                temperature=temperature, seed=seed, tools=tools)


class FakeWrongBackendPlugin:
    """Registers :class:`FakeWrongBackend` as the generation backend ``fake-wrong``."""

    @hookimpl
    def register_generation_backends(self, register):  # noqa: ANN001, ANN201 - pluggy hook
        register("fake-wrong", lambda options, context: FakeWrongBackend())


def with_fake_wrong_backend():
    """The built-in plugins and ``fake-wrong`` (``--set backend=fake-wrong``)."""
    return load_builtin_plugins(FakeWrongBackendPlugin())
