"""BFCL items in the tool-use family's format: function documents as OpenAI-style tool schemas,
and replies' ``<tool_call>{json}</tool_call>`` blocks decoded into BFCL's call form. Shared by the
single-turn and the multi-turn categories."""

from __future__ import annotations

import re
from typing import Any

from spade_core.untrusted_text import load_json

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
#: BFCL's Python parameter types -> JSON Schema types, for the schemas the model is shown.
_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}


def json_schema(node: Any) -> Any:
    """A BFCL parameter schema with its Python type names turned into JSON Schema ones."""
    if isinstance(node, dict):
        out = {k: json_schema(v) for k, v in node.items()}
        if isinstance(out.get("type"), str):
            out["type"] = _JSON_TYPES.get(out["type"], out["type"])
        return out
    if isinstance(node, list):
        return [json_schema(v) for v in node]
    return node


def tool_schemas(functions: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """BFCL function documents as OpenAI function-calling tools (as tool-use programs give)."""
    return tuple({"type": "function", "function": {
        "name": f["name"], "description": f.get("description", ""),
        "parameters": json_schema(f.get("parameters", {"type": "dict", "properties": {}}))}}
        for f in functions)


def decode_calls(reply: str) -> list[dict[str, dict[str, Any]]]:
    """The reply's tool calls as BFCL's decoded form ``[{name: {param: value}}]``; a block that
    is not a JSON call is skipped (BFCL's decoder would fail on it), whatever its shape (nesting,
    size, huge integers, control characters: :func:`~spade_core.untrusted_text.load_json`)."""
    calls = []
    for block in _TOOL_CALL.findall(reply):
        try:
            call = load_json(block.strip())
        except ValueError:
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            continue
        arguments = call.get("arguments", call.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = load_json(arguments) if arguments.strip() else {}
            except ValueError:
                continue
        if isinstance(arguments, dict):
            calls.append({call["name"]: arguments})
    return calls


__all__ = ["decode_calls", "json_schema", "tool_schemas"]
