"""BFCL's Java and JavaScript categories: the documents the model is shown (every parameter a
string, a language hint) and values read back by BFCL's own type converters."""

from __future__ import annotations

from fakes.eval_runs import needs_bfcl, SUITES

_suite, _three_ways = SUITES.suite, SUITES.three_ways


@needs_bfcl
def test_bfcl_java_and_javascript_gold_wrong_half():
    # Gold writes each value as the Java / JavaScript literal BFCL's converters read back; the
    # wrong fake calls the first tool without its required arguments.
    suite = _suite("bfcl", {"categories": ["java", "javascript"]})
    assert _three_ways(suite, 10) == (1.0, 0.0, 0.5)


@needs_bfcl
def test_bfcl_java_and_javascript_use_bfcl_type_checks():
    suite = _suite("bfcl", {"categories": ["java", "javascript"]})
    java, js = suite.items(2, 0)
    assert (java.id, js.id) == ("simple_java_0", "simple_javascript_0")
    # The model sees BFCL's language-specific documents: every parameter a string, with a hint.
    for item, hint in ((java, "Java 8 SDK syntax"), (js, "JavaScript syntax")):
        function = item.tools[0]["function"]
        assert hint in function["description"]
        assert {p["type"] for p in function["parameters"]["properties"].values()} == {"string"}
    # The checker reads the original types: simple_javascript_0's isComplete is a Boolean, so
    # the literal true passes and Python's True (not a JavaScript literal) fails.
    assert '"isComplete": "true"' in js.gold[0]
    assert suite.score(js, js.gold[0]) == 1.0
    assert suite.score(js, js.gold[0].replace('"true"', '"True"')) == 0.0
    assert suite.score(js, js.gold[0].replace('"true"', "true")) == 0.0  # not a string
    (java_1,) = [i for i in _suite("bfcl", {"categories": ["java"]}).items(2, 0)
                 if i.id == "simple_java_1"]
    # A HashMap written as Java: new HashMap<String, Object>() {{ put("limit", 50); ... }}.
    assert "new HashMap<String, Object>()" in java_1.gold[0]
    assert suite.score(java_1, java_1.gold[0]) == 1.0
    assert suite.score(java_1, java_1.gold[0].replace("50", "51")) == 0.0


def test_values_are_written_as_the_literals_of_their_language():
    from plugins.evals.bfcl_languages import literal

    assert literal(5, {"type": "long"}, "java") == "5L"
    assert literal(1.5, {"type": "float"}, "java") == "1.5f"
    assert literal(True, {"type": "boolean"}, "java") == "true"
    assert literal(["a", "b"], {"type": "ArrayList", "items": {"type": "String"}}, "java") == (
        'new ArrayList<>(Arrays.asList("a", "b"))')
    assert literal([1, 2], {"type": "Array", "items": {"type": "int"}}, "java") == (
        "new int[]{1, 2}")
    assert literal({"limit": [50]}, {"type": "HashMap"}, "java") == (
        'new HashMap<String, Object>() {{ put("limit", 50); }}')
    assert literal(False, {"type": "Boolean"}, "javascript") == "false"
    assert literal(["x", 2], {"type": "array"}, "javascript") == "['x', 2]"
    assert literal({"k": ["v"]}, {"type": "dict"}, "javascript") == "{k: 'v'}"
    assert literal("kept as is", {"type": "String"}, "java") == "kept as is"
