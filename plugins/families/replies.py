"""What an agent's reply becomes before the environment sees it, under the reference's episode
protocols (docs/environments.md, "Episode protocols"): the ``\\boxed{}`` action games are stepped
with, and the tool-call check that decides whether a tool-use turn is kept out of the loss.

Pure string processing on the host: regular expressions and ``json.loads`` (JSON is data, not
code, read through :func:`~spade_core.untrusted_text.load_json`, so no shape of reply raises);
nothing here evaluates model output.
"""

from __future__ import annotations

import html
import re

from spade_core.untrusted_text import load_json

__all__ = ["FORMAT_REMINDER", "after_thinking", "boxed_action", "boxed_content",
           "boxed_instructions", "malformed_tool_call", "tool_calls"]

#: Brace-free content in one, two or three brace layers, tried in this order (first match each).
_BOXED_FORMS = (re.compile(r"\\boxed\{([^{}]+)\}"), re.compile(r"\\boxed\{\{([^{}]+)\}\}"),
                re.compile(r"\\boxed\{\{\{([^{}]+)\}\}\}"))
_THINK_END = "</think>"
_LAST_COUNTS = re.compile(r"Only the\s+last\s+\\boxed\{\}\s+of\s+your\s+reply\s+counts\.")

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_XML_FUNCTION = re.compile(r"<function=(\w+)>(.*?)</function>", re.DOTALL)
_XML_PARAMETER = re.compile(r"<parameter=(\w+)>(.*?)</parameter>", re.DOTALL)
#: Longest block the name-first pattern is tried on (its lazy arguments part rescans the block
#: from every start); a longer block is still read when it is a JSON object.
MAX_NAME_FIRST_CHARS = 20000
_NAME_FIRST = re.compile(r'\{\s*"name"\s*:\s*"(\w+)"\s*,\s*"arguments"\s*:\s*(\{.*?\})\s*\}',
                         re.DOTALL)

#: Appended to the observation after a masked malformed tool call (the reference's wording, in
#: our own words): the canonical form the call should have taken.
FORMAT_REMINDER = ('[FORMAT] Your last <tool_call> could not be read. Write exactly: '
                   '<tool_call>{"name": "<tool_name>", "arguments": {<args>}}</tool_call>')


def after_thinking(reply: str) -> str:
    """The text after the last ``</think>`` (the whole reply when there is none): a thinking
    model's answer without its reasoning."""
    end = reply.rfind(_THINK_END)
    return reply if end < 0 else reply[end + len(_THINK_END):]


def boxed_content(reply: str) -> str | None:
    """The content of the reply's ``\\boxed{}``, as the reference extracts it: the first
    brace-free ``\\boxed{X}`` (then the double- and triple-brace forms); failing those, the
    brace-balanced content of the last ``\\boxed`` with up to two outer brace layers removed.
    ``None`` when there is no (closed) ``\\boxed``."""
    if not reply:
        return None
    for form in _BOXED_FORMS:
        found = form.search(reply)
        if found:
            return found.group(1).strip()
    start = reply.find("{", reply.rfind("\\boxed")) if "\\boxed" in reply else -1
    if start < 0:
        return None
    depth = 0
    for index in range(start, len(reply)):
        depth += {"{": 1, "}": -1}.get(reply[index], 0)
        if depth == 0:
            content = reply[start + 1:index].strip()
            for _ in range(2):
                if content.startswith("{") and content.endswith("}"):
                    content = content[1:-1].strip()
            return content
    return None


def boxed_action(reply: str) -> str:
    """The action a game is stepped with under ``action: boxed``: the extracted content
    re-wrapped as ``\\boxed{X}``, or the whole reply (stripped) when nothing, or nothing but
    whitespace, is boxed. Only the text after the last ``</think>`` is read."""
    answer = after_thinking(reply)
    content = boxed_content(answer)
    return f"\\boxed{{{content}}}" if content else answer.strip()


def boxed_instructions(instructions: str, action: str) -> str:
    """Agent instructions that say which ``\\boxed{}`` counts: the families' own text says the
    last one (their programs read the last); under ``action: boxed`` the first is stepped."""
    if action != "boxed":
        return instructions
    return _LAST_COUNTS.sub("Only the first \\\\boxed{} of your reply counts.", instructions)


def tool_calls(reply: str) -> list[tuple[str, object]]:
    """``(name, arguments)`` of every closed ``<tool_call>`` block the reference's parser reads:
    Qwen XML (``<function=NAME><parameter=KEY>VALUE</parameter>``), ``{"name": ..., "arguments":
    {...}}`` with the name first, or any JSON object with a ``"name"``. Blocks it cannot read are
    left out."""
    calls: list[tuple[str, object]] = []
    for block in _blocks(reply.strip()):
        xml = _XML_FUNCTION.search(block, 0, _through_last(block, "</function>"))
        if xml:
            arguments: dict[str, object] = {}
            parameters = xml.group(2)
            for key, raw in _XML_PARAMETER.findall(parameters, 0,
                                                   _through_last(parameters, "</parameter>")):
                value = html.unescape(raw.strip())
                try:
                    arguments[key] = load_json(value)
                except ValueError:
                    arguments[key] = value
            calls.append((xml.group(1), arguments))
            continue
        named = _NAME_FIRST.search(block) if len(block) <= MAX_NAME_FIRST_CHARS else None
        if named:
            try:
                calls.append((named.group(1), load_json(named.group(2))))
            except ValueError:
                calls.append((named.group(1), {}))
            continue
        try:
            data = load_json(block.strip())
        except ValueError:
            continue
        if isinstance(data, dict) and "name" in data:
            calls.append((str(data["name"]), data.get("arguments", data.get("parameters", {}))))
    return calls


def _blocks(text: str) -> list[str]:
    """The insides of the closed ``<tool_call>...</tool_call>`` blocks, as
    ``_BLOCK.findall(text)`` gives them, in linear time (the regular expression rescans to the
    end from every unclosed ``<tool_call>``: quadratic on a reply of thousands of them)."""
    opening, closing = "<tool_call>", "</tool_call>"
    blocks, pos = [], 0
    while (start := text.find(opening, pos)) >= 0:
        end = text.find(closing, start + len(opening))
        if end < 0:
            break
        blocks.append(text[start + len(opening):end])
        pos = end + len(closing)
    return blocks


def _through_last(text: str, closing: str) -> int:
    """Where a search for a pattern ending in ``closing`` may stop: just past its last
    occurrence (0 when there is none), so no unclosed start is rescanned to the end."""
    last = text.rfind(closing)
    return last + len(closing) if last >= 0 else 0


def malformed_tool_call(reply: str) -> bool:
    """True when the reply tried to call a tool and failed: it contains a literal
    ``<tool_call>``, no ``<answer>``, and no call could be read (an unclosed tag counts). The
    reference masks such a turn from the loss and reminds the agent of the format."""
    return "<tool_call>" in reply and not _ANSWER.search(reply) and not tool_calls(reply)
