"""Turning what ``solution()`` returns into actions that can be replayed.

Reasoning programs return the answer (``"42"``) or a list of moves; tool-use programs in the SPADE
format return a description such as ``"1. cd(path='/x') -> Now in /x 2. <answer>done</answer>"``.
Calls are read with :mod:`ast` (never evaluated): only literal arguments are accepted, so a
description that is prose rather than calls yields ``None`` (solvability unverified). So does one
that cannot be read whatever its shape (nesting, size, huge integers, control characters, lone
surrogates: :mod:`spade_core.untrusted_text`): these functions return, never raise.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from plugins.families.answers import extract_all_boxed
from spade_core.untrusted_text import PARSE_FAILURES, parse_python

#: Longest solution text read for calls (``max_info_bytes`` allows 64 KiB); longer is unverified.
MAX_SOLUTION_CHARS = 20000
#: Most call-like parts one step may hold (each is matched to its closing parenthesis by a scan).
MAX_CALLS_PER_STEP = 200

_STEP_SPLIT = re.compile(r"(?:^|\s)\(?\d{1,3}[.)]\s+")
_RESULT_ARROW = re.compile(r"\s*(?:->|=>|\u2192).*", re.DOTALL)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_ANSWER_LINE = re.compile(r"(?:final\s+answer|answer)\s*[:=]\s*(.+)", re.IGNORECASE | re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>.*?</tool_call>", re.DOTALL)
_CALL_START = re.compile(r"\b([A-Za-z_][\w.]*)\s*\(")


def boxed_actions(solution: Any) -> list[str] | None:
    """Reasoning-family actions: each answer wrapped in ``\\boxed{}`` unless it already holds one."""
    items = list(solution) if isinstance(solution, (list, tuple)) else [solution]
    if not items:
        return None
    actions = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            return None
        text = str(item).strip()
        if not text:
            return None
        actions.append(text if extract_all_boxed(text) else f"\\boxed{{{text}}}")
    return actions


def tool_call_action(name: str, arguments: dict[str, Any]) -> str:
    """One ``<tool_call>`` action in the JSON protocol."""
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def _call_text_end(text: str, open_paren: int) -> int:
    """Index just past the ``)`` matching ``text[open_paren]``, skipping quoted strings; -1 if
    unbalanced."""
    depth, quote, k = 0, "", open_paren
    while k < len(text):
        ch = text[k]
        if quote:
            if ch == "\\":
                k += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return -1


def _parse_call(text: str, tools: dict[str, list[str]] | None) -> tuple[str, dict] | None:
    """``(name, literal arguments)`` of one call's text, or ``None`` when it is not one."""
    try:
        return _read_call(text, tools)
    except PARSE_FAILURES:  # nesting, huge literals, surrogates: not a call we can replay
        return None


def _read_call(text: str, tools: dict[str, list[str]] | None) -> tuple[str, dict] | None:
    try:
        node = parse_python(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    name = ast.unparse(node.func)
    if tools is not None and name not in tools:
        return None
    arguments: dict[str, Any] = {}
    try:
        if node.args:
            order = (tools or {}).get(name)
            if not order or len(node.args) > len(order):
                return None
            for key, value in zip(order, node.args):
                arguments[key] = ast.literal_eval(value)
        for keyword in node.keywords:
            if keyword.arg is None:
                return None
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
    except (ValueError, SyntaxError, TypeError):
        return None
    try:
        json.dumps(arguments)
    except (TypeError, ValueError):
        return None
    return name, arguments


def _calls_in(step: str, tools: dict[str, list[str]] | None) -> list[tuple[str, dict]] | None:
    """Every call in one step's text, or ``None`` when a call-like part does not parse."""
    calls, pos = [], 0
    for _ in range(MAX_CALLS_PER_STEP):
        match = _CALL_START.search(step, pos)
        if not match:
            return calls
        end = _call_text_end(step, match.end() - 1)
        if end < 0:
            return None
        parsed = _parse_call(step[match.start():end], tools)
        if parsed is None:
            if tools is not None and match.group(1) not in tools:
                pos = match.end()
                continue
            return None
        calls.append(parsed)
        pos = end
    return None


def _tool_orders(tools: Sequence[dict] | None) -> dict[str, list[str]] | None:
    """Tool name -> parameter names in declaration order, from OpenAI-style schemas."""
    if tools is None:
        return None
    orders: dict[str, list[str]] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        name = function.get("name")
        properties = (function.get("parameters") or {}).get("properties") or {}
        if isinstance(name, str):
            orders[name] = list(properties) if isinstance(properties, dict) else []
    return orders


def tool_use_actions(solution: Any, tools: Sequence[dict] | None = None) -> list[str] | None:
    """Tool-use actions from a solution: a list of actions, text holding ``<tool_call>`` blocks,
    or a SPADE description of numbered calls ending in an answer (``<answer>x</answer>`` or
    ``ANSWER: x``). ``tools`` (the native schemas from ``info["tools"]``) restricts calls to
    known tools and maps positional arguments. ``None`` when it does not parse or has no answer.
    """
    if isinstance(solution, (list, tuple)):
        actions: list[str] = []
        for item in solution:
            if not isinstance(item, str):
                return None
            if "<tool_call>" in item or "<answer>" in item:
                actions.append(item)
                continue
            converted = tool_use_actions(item, tools)
            if converted is None:
                parsed = _parse_call(item, _tool_orders(tools))
                if parsed is None:
                    return None
                actions.append(tool_call_action(*parsed))
            else:
                actions.extend(converted)
        has_answer = any("<answer>" in a for a in actions)
        return actions if actions and has_answer else None
    if not isinstance(solution, str) or not solution.strip() \
            or len(solution) > MAX_SOLUTION_CHARS:
        return None
    text = solution.strip()
    if "<tool_call>" in text:
        actions = [block for block in _TOOL_CALL.findall(text)]
        answer = _ANSWER_TAG.search(text)
        return actions + [answer.group(0)] if actions and answer else None
    orders = _tool_orders(tools)
    answer_action = None
    tag = _ANSWER_TAG.search(text)
    if tag:
        answer_action = tag.group(0)
        text = text[:tag.start()] + " " + text[tag.end():]
    else:
        line = _ANSWER_LINE.search(text)
        if line:
            value = _RESULT_ARROW.sub("", line.group(1)).strip().strip("'\"").rstrip(".")
            if value:
                answer_action = f"<answer>{value}</answer>"
            text = text[:line.start()]
    if answer_action is None:
        return None
    steps = [s for s in _STEP_SPLIT.split(text) if s.strip()]
    actions = []
    for step in steps:
        calls = _calls_in(_RESULT_ARROW.sub("", step), orders)
        if calls is None:
            return None
        actions.extend(tool_call_action(name, arguments) for name, arguments in calls)
    if steps and not actions:
        return None  # prose only: replaying the bare answer would prove nothing
    return actions + [answer_action]
