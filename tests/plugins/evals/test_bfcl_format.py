"""BFCL items in the tool-use family's format: function documents as tool schemas with JSON
Schema types, and a reply's ``<tool_call>`` blocks decoded into BFCL's call form."""

from __future__ import annotations

from plugins.evals.bfcl_format import decode_calls, tool_schemas


def test_function_documents_become_tools_with_json_schema_types():
    (tool,) = tool_schemas([{"name": "area", "parameters": {"type": "dict", "properties": {
        "size": {"type": "float"}, "corners": {"type": "tuple", "items": {"type": "dict"}},
        "unit": {"type": "string"}}}}])
    assert tool["type"] == "function" and tool["function"]["name"] == "area"
    assert tool["function"]["description"] == ""
    parameters = tool["function"]["parameters"]
    assert parameters["type"] == "object"
    assert {k: v["type"] for k, v in parameters["properties"].items()} == {
        "size": "number", "corners": "array", "unit": "string"}
    assert parameters["properties"]["corners"]["items"]["type"] == "object"
    (bare,) = tool_schemas([{"name": "ping"}])
    assert bare["function"]["parameters"] == {"type": "object", "properties": {}}


def test_tool_calls_are_decoded_and_blocks_that_are_not_calls_skipped():
    reply = ('Sure.<tool_call>{"name": "area", "arguments": {"size": 2}}</tool_call>'
             '<tool_call>{"name": "unit", "parameters": "{\\"to\\": \\"cm\\"}"}</tool_call>'
             '<tool_call>not json</tool_call><tool_call>["area"]</tool_call>'
             '<tool_call>{"name": "empty", "arguments": ""}</tool_call>'
             '<tool_call>{"name": "last", "arguments": {}}')  # unclosed at the end: still read
    assert decode_calls(reply) == [{"area": {"size": 2}}, {"unit": {"to": "cm"}},
                                   {"empty": {}}, {"last": {}}]
    assert decode_calls("The area is 4.") == []
