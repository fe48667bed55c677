"""The ``bfcl`` eval suite: Berkeley Function Calling Leaderboard (v4) single-turn categories from
the data shipped in the ``bfcl-eval`` package, asked in the tool-use family's format
(``<tool_call>{json}</tool_call>``, schemas through ``tools=``) and scored by BFCL's own AST
checker (``plugins/evals/bfcl_checker.py``). Irrelevance categories pass when the reply calls no
tool, as BFCL scores them."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSuite

from plugins.evals.bfcl_checker import INSTALL_HINT, check
from plugins.evals.items import spread
from plugins.evals.options import BfclSuiteOptions
from plugins.families.tool_use import AGENT_INSTRUCTIONS

VERSION_PREFIX = "BFCL_v4_"
#: Our category name -> BFCL's data file stem (Python categories: the AST checker's language).
CATEGORIES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
    "live_simple": "live_simple",
    "live_multiple": "live_multiple",
    "live_parallel": "live_parallel",
    "live_parallel_multiple": "live_parallel_multiple",
    "live_irrelevance": "live_irrelevance",
}
DEFAULT_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
#: BFCL's Python parameter types -> JSON Schema types, for the schemas the model is shown.
_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}
REFUSAL = "None of the available tools can do this, so I will not call one."


@cache
def _read(relative: str) -> list[dict[str, Any]]:
    try:
        root = resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        raise ConfigError(f"the bfcl eval suite needs the bfcl-eval package: {INSTALL_HINT} "
                          "(--no-deps: its pins would downgrade numpy and faiss)") from None
    text = (root / relative).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


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
    is not a JSON call is skipped (BFCL's decoder would fail on it)."""
    calls = []
    for block in _TOOL_CALL.findall(reply):
        try:
            call = json.loads(block.strip())
        except ValueError:
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            continue
        arguments = call.get("arguments", call.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                continue
        if isinstance(arguments, dict):
            calls.append({call["name"]: arguments})
    return calls


def gold_reply(ground_truth: list[dict[str, Any]] | None) -> str:
    """A reply that BFCL accepts: each expected call with the first possible value of each
    parameter (optional parameters whose first possibility is "omit" are left out)."""
    if not ground_truth:
        return REFUSAL
    blocks = []
    for call in ground_truth:
        (name, params), = call.items()
        blocks.append("<tool_call>" + json.dumps({"name": name, "arguments": _chosen(params)})
                      + "</tool_call>")
    return "\n".join(blocks)


def _chosen(possibilities: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """The first possibility of each parameter; dictionary values one level down list their
    possibilities too (BFCL's checker compares them that way), deeper ones are plain values."""
    chosen = {}
    for key, values in possibilities.items():
        if not isinstance(values, list):
            chosen[key] = values
        elif values and values[0] != "":
            chosen[key] = _value(values[0], depth)
    return chosen


def _value(value: Any, depth: int) -> Any:
    if depth > 0:
        return value
    if isinstance(value, dict):
        return _chosen(value, depth + 1)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_chosen(v, depth + 1) for v in value]
    return value


class BfclSuite(EvalSuite):
    """BFCL single-turn categories; each category is a bucket."""

    name = "bfcl"

    def __init__(self, categories: list[str] | None = None) -> None:
        chosen = list(categories or DEFAULT_CATEGORIES)
        unknown = [c for c in chosen if c not in CATEGORIES]
        if unknown:
            raise ConfigError(f"bfcl suite: unknown categor{'y' if len(unknown) == 1 else 'ies'} "
                              f"{', '.join(unknown)}; categories are {', '.join(CATEGORIES)}")
        self.categories = chosen

    def _category(self, category: str) -> list[EvalItem]:
        stem = VERSION_PREFIX + CATEGORIES[category] + ".json"
        answers = {} if "irrelevance" in category else {
            a["id"]: a["ground_truth"] for a in _read("possible_answer/" + stem)}
        items = []
        for entry in _read(stem):
            turns = entry["question"]
            messages = [m for m in turns[0] if m.get("role") in ("system", "user")]
            truth = answers.get(entry["id"])
            question = "\n".join(m["content"] for m in messages if m["role"] == "user")
            items.append(EvalItem(
                id=entry["id"], bucket=category,
                prompt=({"role": "system", "content": AGENT_INSTRUCTIONS}, *messages),
                tools=tool_schemas(entry["function"]), gold=(gold_reply(truth),), text=question,
                data={"functions": entry["function"], "answer": truth}))
        return items

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        """The categories' items in BFCL's own order (the data is fixed; ``seed`` is unused)."""
        return spread({c: self._category(c) for c in self.categories}, limit)

    def score(self, item: EvalItem, reply: str) -> float:
        calls = decode_calls(reply)
        if "irrelevance" in item.bucket:
            return 0.0 if calls else 1.0
        if not calls:
            return 0.0
        try:
            verdict = check(item.data["functions"], calls, item.data["answer"],
                            CATEGORIES[item.bucket])
        except Exception:  # noqa: BLE001 - the checker choking on odd values is a failure
            return 0.0
        return 1.0 if verdict.get("valid") else 0.0


def build(options: BfclSuiteOptions, context: Any) -> BfclSuite:
    return BfclSuite(options.categories)
