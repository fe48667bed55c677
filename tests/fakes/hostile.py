"""Hostile replies for tests: the shapes a model can send that once ended a run or an evaluation
(issue 38) -- nesting past the recursion limit inside tool calls, solutions and designer code,
integers past the int-from-string limit, NUL and terminal control characters, lone surrogates
(as an OpenAI-compatible server can send them), sheer size -- and a fake backend whose every
reply is one of them, in turn."""

from __future__ import annotations

from spade_core.interfaces import Generation, GenerationBackend

SURROGATES = "\udfff\ud800"
_TERMS = "+".join(["1"] * 5000)

#: Every reply a :class:`FakeHostileBackend` gives, in order (then again from the start).
HOSTILE_REPLIES: tuple[str, ...] = (
    "<tool_call>" + "[" * 1000 + "</tool_call>",
    '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * 5000 + "}}</tool_call>",
    "<tool_call><function=f><parameter=a>" + "[" * 1000 + "</parameter></function></tool_call>",
    f'<tool_call>{{"name": "{SURROGATES}", "arguments": {{"a": "{SURROGATES}"}}}}</tool_call>',
    f"\\boxed{{{SURROGATES}}} {SURROGATES}",
    "1. f(a=" + _TERMS + ") ANSWER: 1",
    "```python\nclass XEnv:\n    x = " + _TERMS + "\n```",
    "```python\nclass XEnv:\n    x = " + "(" * 5000 + "\n```",
    "[f(a=" + "9" * 5000 + ")]",
    "\\boxed{" + "9" * 5000 + "}",
    "\x00\x1b[2J\x1b]0;owned\x07\x9b31m \\boxed{\x00} <answer>\x1b[2J</answer>",
    "[" * 3000 + "]" * 3000,
    "x" * 100_000,
)


class FakeScriptedBackend(GenerationBackend):
    """A fake backend for tests: answers every conversation (designer, agent, hint, validator,
    customer, evaluation item) with the next of ``replies``, in turn."""

    def __init__(self, replies: "tuple[str, ...] | list[str]") -> None:
        self.replies = replies
        self.calls = 0

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        out = []
        for _ in conversations:
            out.append(Generation(text=self.replies[self.calls % len(self.replies)]))
            self.calls += 1
        return out


class FakeHostileBackend(FakeScriptedBackend):
    """A fake backend for tests whose every reply is one of :data:`HOSTILE_REPLIES`."""

    def __init__(self, replies: tuple[str, ...] = HOSTILE_REPLIES) -> None:
        super().__init__(replies)
