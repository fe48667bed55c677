"""BFCL's Java and JavaScript categories (``simple_java``, ``simple_javascript``): the model is
shown BFCL's own language-specific function documents (every parameter a string holding a Java
or JavaScript literal, as ``bfcl_eval.utils.add_language_specific_hint_to_function_doc`` writes
them, read by the suite's loader: ``BfclData.shown``), and its string values are read back by
BFCL's checker with its type converters (``java_type_converter``, ``js_type_converter``) in the
sandbox. The gold replies here write each
expected value as the literal those converters read back."""

from __future__ import annotations

import json
from typing import Any

#: Our category -> the language the AST checker uses (``bfcl_eval.constants.enums.Language``).
LANGUAGES = {"java": "java", "javascript": "javascript"}


def literal(value: Any, schema: dict[str, Any], language: str) -> Any:
    """``value`` (a possible answer) as the string BFCL's converter for ``language`` reads back
    as it, given the parameter's original ``schema``; strings BFCL keeps as they are."""
    kind = schema.get("type", "any")
    if isinstance(value, str):
        return value
    if language == "java":
        return _java(value, kind, schema.get("items", {}).get("type"))
    return _javascript(value, kind)


def _java(value: Any, kind: str, element: str | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}L" if kind == "long" else str(value)
    if isinstance(value, float):
        return f"{value}f" if kind == "float" else repr(value)
    if isinstance(value, list) and kind == "ArrayList":
        parts = [json.dumps(v) if element == "String" else _java(v, element or "any", None)
                 for v in value]
        return f"new ArrayList<>(Arrays.asList({', '.join(parts)}))"
    if isinstance(value, list):
        parts = [v if isinstance(v, str) else _java(v, element or "any", None) for v in value]
        return f"new {element or 'Object'}[]{{{', '.join(parts)}}}"
    if isinstance(value, dict):  # {key: [possibilities]}: the first of each
        puts = " ".join(f'put("{k}", {_java_element(v[0] if isinstance(v, list) else v)});'
                        for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


def _java_element(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else _java(value, "any", None)


def _javascript(value: Any, kind: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_js_element(v) for v in value) + "]"
    if isinstance(value, dict):  # {key: [possibilities]}: the first of each
        return "{" + ", ".join(f"{k}: {_js_element(v[0] if isinstance(v, list) else v)}"
                               for k, v in value.items()) + "}"
    return str(value)


def _js_element(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else _javascript(value, "any")


__all__ = ["LANGUAGES", "literal", "shown_functions"]
