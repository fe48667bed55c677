"""ACEBench's scoring rules (``model_eval/checker.py`` and ``eval_main.py`` of
github.com/ACEBench/ACEBench), written for this project: decoding a reply's calls, the normal
categories' call checker, the special categories' wording checks and the agent categories'
process accuracy.

Replies are untrusted. A reply's calls are read with ``ast.parse`` (a syntax tree; nothing is
compiled to code or run) and only literal nodes are turned into values: where ACEBench
``eval()`` s an arithmetic expression or a lambda, this module keeps the expression's source
text instead (which fails the value checks, as a non-literal argument should). Replies longer
than :data:`MAX_REPLY` characters and nesting deeper than :data:`MAX_DEPTH` are not decoded."""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Any

MAX_REPLY = 20_000
MAX_DEPTH = 60
_THINK_END = "</think>"

#: ACEBench's type names -> Python types (``PYTHON_TYPE_MAPPING``; "number" is int and "enum"
#: matches no value's type, both as ACEBench has them).
TYPES: dict[str, Any] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list,
    "tuple": list, "dict": dict, "any": str, "list": list, "object": dict,
    "objectArray": list, "list(string)": list, "list(enum)": list, "int": int,
    "enum": enumerate, "number": int}
NESTED = ("array", "tuple", "list(string)", "list(enum)", "object", "objectArray")


class Invalid(Exception):
    """A reply, or a value in it, that ACEBench's checker rejects."""


# -- decoding -------------------------------------------------------------------------------------

def decode_calls(reply: str, squeeze: bool = True) -> list[dict[str, dict[str, Any]]] | None:
    """The calls of a reply ``[Api(k=v, ...), ...]`` as ``[{name: {param: value}}]``, or
    ``None`` when it is not such a list. As ACEBench, a reasoning block before ``</think>`` is
    dropped and (``squeeze``, as its call checker; not when its agent executes calls) all
    whitespace is removed before parsing."""
    if _THINK_END in reply:
        reply = reply[reply.rindex(_THINK_END) + len(_THINK_END):]
    if len(reply) > MAX_REPLY:
        return None
    text = "".join(reply.split()) if squeeze else reply.strip()
    if not text.startswith("["):
        return None
    try:
        tree = ast.parse(text, mode="eval")
        if not isinstance(tree.body, ast.List) or not tree.body.elts:
            return None
        calls = []
        for element in tree.body.elts:
            if not isinstance(element, ast.Call):
                return None
            calls.append(_call(element, 0))
        return calls
    except (Invalid, SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return None


def _name(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _call(node: ast.Call, depth: int) -> dict[str, dict[str, Any]]:
    return {_name(node.func): {k.arg: _value(k.value, depth + 1) for k in node.keywords
                               if k.arg is not None}}


def _value(node: ast.AST, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Invalid("too deep")
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) \
            and isinstance(node.op, (ast.USub, ast.UAdd)):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    if isinstance(node, ast.List):
        return [_value(v, depth + 1) for v in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(v, depth + 1) for v in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise Invalid("dict unpacking")
        return {_value(k, depth + 1): _value(v, depth + 1)
                for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _call(node, depth) if node.keywords else {_name(node.func): {}}
    if isinstance(node, (ast.BinOp, ast.Lambda, ast.Subscript)):
        return ast.unparse(node)
    raise Invalid(f"unsupported {type(node).__name__}")


def call_text(name: str, params: dict[str, Any]) -> str:
    """``name(k=v, ...)`` with each value as a Python literal (what :func:`decode_calls` reads
    back)."""
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"


# -- normal categories ---------------------------------------------------------------------------

def standardize(text: str) -> str:
    """ACEBench's string normal form: no spaces or ``,./-_*^``, lower case, ``'`` as ``"``."""
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def normal_verdict(category: str, functions: Any, answer: Any, question: str,
                   reply: str) -> bool:
    """Whether ACEBench accepts ``reply`` for a normal entry: its calls match one of the
    possible answers (a list of them, or one)."""
    calls = decode_calls(reply)
    if calls is None:
        return False
    for possible in answer if isinstance(answer, list) else [answer]:
        try:
            if _normal(functions, calls, possible, category):
                return True
        except (Invalid, KeyError, TypeError, AttributeError, IndexError, ValueError):
            continue
    return False


def _normal(functions: Any, calls: list[dict[str, Any]], possible: dict[str, Any],
            category: str) -> bool:
    if len(calls) != len(possible):
        return False
    names = list(possible)
    expected = [{re.sub(r"_\d+$", "", name): params} for name, params in possible.items()]
    made = Counter(name for call in calls for name in call)
    wanted = Counter(name for call in expected for name in call)
    if made != wanted:
        return False
    for original, want in zip(names, expected):
        description = _description(functions, original)
        (name,) = want
        if not any(next(iter(call)) == name and _function_ok(description, call, want, category)
                   for call in calls):
            return False
    return True


def _description(functions: Any, name: str) -> dict[str, Any]:
    """ACEBench's ``find_description``: the first function whose name is part of ``name``."""
    if isinstance(functions, list):
        for function in functions:
            if function["name"] in name:
                return function
        raise Invalid(f"no function for {name}")
    return functions


def _function_ok(description: dict[str, Any], call: dict[str, Any], want: dict[str, Any],
                 category: str) -> bool:
    possible = next(iter(want.values()))
    params = next(iter(call.values()))
    schema = description["parameters"]
    if params == {} and schema == {}:
        return True
    if params == {} or schema == {}:
        return False
    if possible == schema["properties"]:
        return True
    if possible == {}:
        return False
    name = description["name"]
    if name not in call:
        return False
    params = call[name]
    details = schema["properties"]
    if any(p not in params for p in schema.get("required", [])):
        return False
    for param, value in params.items():
        if param not in details or param not in possible:
            return False
        kind = details[param]["type"]
        expected = TYPES[kind]
        nested = None
        if kind in NESTED:
            items = details[param].get("items")
            inner = items["type"] if isinstance(items, dict) and "type" in items else (
                "string" if "string" in kind else "enum" if "enum" in kind else "dict")
            nested = TYPES[inner]
        if kind == "tuple" and isinstance(value, tuple):
            value = list(value)
        if kind == "float" and type(value) is int:
            value = float(value)
        valid, variable = _type_ok(value, possible[param], expected, nested)
        if not valid:
            return False
        if variable:
            continue
        want_value = possible[param]
        if expected is dict:
            if not _dict_ok(value, want_value):
                return False
        elif expected is list and nested is dict:
            if kind == "objectArray" and (len(value) != len(want_value) or not all(
                    _dict_ok(v, w) for v, w in zip(value, want_value))):
                return False
            if not _list_of_dicts_ok(value, want_value):
                return False
        elif expected is str:
            got, wanted = standardize(value), standardize(want_value)
            if (got != wanted) if "agent" in category else (wanted not in got):
                return False
        elif expected is list and not _list_ok(value, want_value):
            return False
    return True


def _type_ok(value: Any, possible: Any, expected: Any, nested: Any) -> tuple[bool, bool]:
    """ACEBench's ``type_checker``: (valid, the value is a "variable" not checked further)."""
    possible_type = type(possible) if possible != "" else None
    variable = possible_type is not None and possible_type != expected
    if value == "true":
        value = True
    if value == "false":
        value = False
    valid = True
    if type(value) == expected:  # noqa: E721 - ACEBench compares exact types
        if nested is None:
            return True, variable
        for option in possible:
            fine = True
            if type(option) == list:  # noqa: E721
                fine = all(_type_ok(v, option, nested, None)[0] for v in value)
            if fine:
                return True, variable
        valid = False
    same = type(value) == possible_type  # noqa: E721
    if possible_type is not None and (same or possible == value):
        return valid, True
    return False, variable


def _dict_ok(value: Any, possible: Any) -> bool:
    """ACEBench's ``dict_checker``: same keys, each expected value found in the given one
    (strings compared in normal form, nested dicts recursively)."""
    if not isinstance(value, dict) or len(value) != len(possible):
        return False
    for key, item in value.items():
        if item == "true":
            item = True
        if item == "false":
            item = False
        if key not in possible:
            return False
        wanted = possible[key]
        if isinstance(wanted, dict):
            if not _dict_ok(item, wanted):
                return False
            continue
        got = standardize(item) if isinstance(item, str) else item
        wanted = standardize(wanted) if isinstance(wanted, str) else wanted
        if str(wanted) not in str(got):
            return False
    return True


def _list_of_dicts_ok(value: list[Any], possible: list[Any]) -> bool:
    return len(value) == len(possible) and all(_dict_ok(v, p) for v, p in zip(value, possible))


def _list_ok(value: list[Any], possible: list[Any]) -> bool:
    def norm(items: Any) -> list[Any]:
        return [standardize(v) if isinstance(v, str) else v for v in items]

    return norm(value) == norm(possible)


# -- special categories ----------------------------------------------------------------------------

def special_verdict(category: str, answer: Any, reply: str) -> bool:
    """ACEBench's ``special_eval`` for one reply: incomplete -> "Missing necessary parameters",
    the API's name and each missing parameter; error_param -> "There is incorrect value" and
    each incorrect value; irrelevant -> "the limitations of the function"."""
    if "irrelevant" in category:
        return "the limitations of the function" in reply
    if not isinstance(answer, dict):
        return False
    for name, values in answer.items():
        values = values if isinstance(values, list) else [values]
        if "incomplete" in category:
            if "Missing necessary parameters" not in reply or name not in reply:
                return False
        elif "There is incorrect value" not in reply:
            return False
        if any(str(v) not in reply for v in values):
            return False
    return True


# -- agent categories ---------------------------------------------------------------------------

def process_accuracy(milestones: list[Any], calls: list[str]) -> float:
    """ACEBench's process accuracy: the share of the milestone calls found in the agent's calls,
    in order (each compared as stripped text); with several milestone lists, the best."""
    if milestones and isinstance(milestones[0], list):
        return max(_in_order(m, calls) for m in milestones)
    return _in_order(milestones, calls)


def _in_order(milestones: list[str], calls: list[str]) -> float:
    if not milestones:
        return 1.0
    found, position = 0, 0
    for stone in milestones:
        while position < len(calls):
            position += 1
            if calls[position - 1].strip() == stone.strip():
                found += 1
                break
    return round(found / len(milestones), 3)


def end_state_verdict(expected: Any, state: list[dict[str, Any]]) -> bool:
    """ACEBench's agent checker (``agent_eval`` and ``agent_checker``): the end state (one
    ``{class: {attribute: value}}`` per involved class, as JSON data) has as many classes as the
    ground truth, and every ground-truth class found in it by name has each of its attributes
    right (a dict attribute: each expected key present and equal). As in ACEBench, a ground-truth
    class no state entry is named like is not checked (its data spells ``ReminderAPI`` where the
    class is ``ReminderApi``)."""
    wanted = expected if isinstance(expected, list) else [expected]
    if not isinstance(state, list) or len(wanted) != len(state):
        return False
    for truth in wanted:
        if not isinstance(truth, dict) or not truth:
            return False
        match = next((s for s in state if isinstance(s, dict) and set(s) == set(truth)), None)
        if match is not None and not _class_state_ok(match, truth):
            return False
    return True


def _class_state_ok(state: dict[str, Any], truth: dict[str, Any]) -> bool:
    (expected,) = list(truth.values())[:1]
    (actual,) = list(state.values())[:1]
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return False
    for attribute, value in actual.items():
        if attribute not in expected:
            return False
        wanted = expected[attribute]
        if isinstance(wanted, dict):
            if not isinstance(value, dict):
                return False
            if any(key not in value or value[key] != item for key, item in wanted.items()):
                return False
        elif wanted != value:
            return False
    return True
