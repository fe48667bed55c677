"""Every parser of model or designer text returns a value or raises its documented error, whatever
the text: property-based tests (hypothesis, bounded by the ``ci`` profile of tests/conftest.py)
over generated hostile shapes (nesting far past the recursion limit, integers past the
int-from-string limit, NUL and control characters, lone surrogates, size), placed where each
parser looks (inside ``<tool_call>`` blocks, JSON arguments, XML parameters, ``\\boxed{}``, solution
call descriptions, python code blocks)."""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugins.designer.full_program import extract_program
from plugins.evals import acebench_checker, aime_suite, bfcl_format, gpqa_suite, items
from plugins.evals import livecodebench_suite
from plugins.families import answers, replies, solutions
from plugins.families.program import ProgramShape, program_shape, static_problems
from spade_core.interfaces import Generation
from spade_core.records import Verdict
from spade_core.selfplay.hint_writer import answer_claims, clean_hint, contradicts_answer
from spade_core.messages import printable
from spade_core.untrusted_text import MAX_JSON_DEPTH, load_json, parse_python, valid_unicode


SURROGATES = "\udfff\ud800"
#: Characters hostile text is made of: anything hypothesis draws, plus what breaks parsers.
_SPECIAL = st.sampled_from(["\x00", "\x1b[2J", "\x9b", "\r", SURROGATES, "\ud800", "[", "{",
                            "(", '"', "'", "\\", ",", ":", "}", "]", ")", "\n", "9"])
_PIECES = st.one_of(st.characters(), _SPECIAL)


def _text(max_size: int) -> st.SearchStrategy[str]:
    """Text of drawn characters and special pieces (some longer than one character)."""
    return st.lists(_PIECES, max_size=max_size).map("".join)

_OPENERS = st.sampled_from(["[", "{\"a\": ", "(", "f(", "1+", "-", "not ", "[[", "a.", "{"])


@st.composite
def _nested(draw) -> str:
    opener = draw(_OPENERS)
    depth = draw(st.integers(0, 6000))
    closer = {"[": "]", "(": ")", "f(": ")", "[[": "]]", "{": "}", "{\"a\": ": "}"}.get(opener, "")
    inner = draw(st.sampled_from(["1", "x", "", "'s'", "null"]))
    return opener * depth + inner + (closer * depth if draw(st.booleans()) else "")


@st.composite
def _sum(draw) -> str:
    return "+".join(["1"] * draw(st.integers(1, 60000)))


_HUGE_INT = st.integers(4000, 20000).map(lambda n: "9" * n)
PAYLOAD = st.one_of(_text(200), _nested(), _sum(), _HUGE_INT,
                    st.just(SURROGATES), st.just("\x00" * 100))


@st.composite
def hostile_reply(draw) -> str:
    """A reply shaped like what a parser reads, with a hostile payload where the value goes."""
    p = draw(PAYLOAD)
    template = draw(st.sampled_from([
        "{p}", "<tool_call>{p}</tool_call>", "<tool_call>{p}",
        '<tool_call>{{"name": "f", "arguments": {p}}}</tool_call>',
        '<tool_call>{{"name": "f", "arguments": "{p}"}}</tool_call>',
        '<tool_call>{{"name": {p}, "arguments": {{}}}}</tool_call>',
        "<tool_call><function=f><parameter=a>{p}</parameter></function></tool_call>",
        "\\boxed{{{p}}}", "\\boxed{p}", "<answer>{p}</answer>", "[f(a={p})]", "[{p}]",
        "1. f(a={p}) ANSWER: 1", "1. {p} <answer>1</answer>", "<think>{p}</think>{p}",
        "```python\nclass XEnv:\n    x = {p}\n```", "```python\nclass XEnv({p}):\n    pass\n```",
        "class XEnv:\n    x = {p}\n", "The answer is {p}.",
    ]))
    return template.replace("{p}", p).replace("{{", "{").replace("}}", "}")


@given(hostile_reply())
def test_tool_call_decoders_never_raise(reply):
    calls = bfcl_format.decode_calls(reply)
    assert isinstance(calls, list)
    json.dumps(calls)  # what reaches the sandbox is encodable
    found = replies.tool_calls(reply)
    assert isinstance(found, list)
    assert isinstance(replies.malformed_tool_call(reply), bool)
    decoded = acebench_checker.decode_calls(reply)
    assert decoded is None or isinstance(decoded, list)


@given(hostile_reply())
def test_boxed_and_answer_readers_never_raise(reply):
    assert isinstance(replies.boxed_action(reply), str)
    content = replies.boxed_content(reply)
    assert content is None or isinstance(content, str)
    assert isinstance(answers.extract_all_boxed(reply), list)
    assert isinstance(answers.answers_match(reply, "42"), bool)
    number = answers.parse_number(reply)
    assert number is None or number == number


@given(hostile_reply())
def test_evaluation_answer_readers_never_raise(reply):
    assert isinstance(items.final_answer(reply), str)
    for last in (False, True):
        value = aime_suite.reply_integer(reply, last)
        assert value is None or isinstance(value, int)
    letter = gpqa_suite.chosen_letter(reply)
    assert letter is None or isinstance(letter, str)
    assert isinstance(livecodebench_suite.extract_code(reply), str)


def test_a_huge_last_integer_is_no_aime_answer():
    assert aime_suite.reply_integer("answer " + "9" * 5000, last_integer=True) is None


@given(hostile_reply())
def test_solution_readers_return_actions_or_none(text):
    for value in (text, [text, "<answer>1</answer>"], [text]):
        actions = solutions.tool_use_actions(value)
        assert actions is None or all(isinstance(a, str) for a in actions)
        actions = solutions.tool_use_actions(value, [{"type": "function", "function": {
            "name": "g", "parameters": {"properties": {"a": {}}}}}])
        assert actions is None or all(isinstance(a, str) for a in actions)
    boxed = solutions.boxed_actions(text)
    assert boxed is None or all(isinstance(a, str) for a in boxed)


@given(hostile_reply())
def test_designer_completion_and_program_checks_never_raise(completion):
    program = extract_program(completion)
    assert program is None or isinstance(program, str)
    for source in {completion, program or ""}:
        try:
            assert isinstance(program_shape(source), ProgramShape)
        except SyntaxError:
            pass  # the documented error
        problems = static_problems(source)
        assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
    from plugins.designer.options import SkeletonOptions
    from plugins.designer.skeleton import Skeleton
    from spade_core.interfaces import NoProgram

    for family in _families():
        try:  # a program, None, or NoProgram with its reason: nothing else
            filled = Skeleton(SkeletonOptions()).extract(completion, family)
        except NoProgram as refusal:
            assert str(refusal)
            continue
        assert filled is None or isinstance(filled, str)


@given(hostile_reply())
def test_hint_readers_never_raise(hint):
    assert isinstance(clean_hint(hint), str)
    assert all(isinstance(c, str) for c in answer_claims(hint))
    verdict = contradicts_answer(hint, ["\\boxed{42}"], answers.answers_match)
    assert verdict in (None, True, False)


@given(hostile_reply())
def test_family_static_checks_never_raise(source):
    families = _families()
    assert {"reasoning", "tool-use"} <= {f.name for f in families}
    for family in families:
        problems = family.static_problems(source)
        assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)


_FAMILIES: list = []


def _families() -> list:
    """The built-in families whose static checks read programs on the host (built once)."""
    if not _FAMILIES:
        from spade_core.plugins import load_plugins

        registry = load_plugins().registry
        for name in ("reasoning", "tool-use", "reasoning-gym"):
            try:
                _FAMILIES.append(registry.build("env_family", name, {}, f"families: {name}"))
            except Exception:  # noqa: BLE001 - an optional extra not installed here
                continue
    return _FAMILIES


@given(_text(300))
def test_clean_text_helpers(text):
    clean = valid_unicode(text)
    clean.encode("utf-8")
    assert Generation(text=text).text == clean
    assert (clean == text) == (SURROGATES[0] not in text and SURROGATES[1] not in text
                               and not any(0xD800 <= ord(c) <= 0xDFFF for c in text))
    shown = printable(text)
    assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) < 0xA0 for c in shown)
    assert Verdict(False, "crash", text).message == shown


@given(PAYLOAD)
def test_load_json_raises_only_value_error(text):
    try:
        value = load_json(text)
    except ValueError:
        return
    json.dumps(value)


@given(PAYLOAD)
def test_parse_python_raises_only_syntax_error(text):
    try:
        tree = parse_python(text)
    except SyntaxError:
        return
    assert isinstance(tree, ast.Module)


@pytest.mark.parametrize("text", [
    "[" * 100_000, '{"a":' * 100_000, "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
    "9" * 50_000, '"\\udfff\\ud800"' + "x",
])
def test_load_json_on_the_known_shapes(text):
    with pytest.raises(ValueError):
        load_json(text)


def test_load_json_keeps_what_it_can_hold():
    assert load_json('"\\udfff"') == "\udfff"  # a valid JSON string; replies are cleaned apart
    assert load_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None


@pytest.mark.parametrize("text", [
    "+".join(["1"] * 100_000), "(" * 100_000, "x = '\x00'", f"x = '{SURROGATES}'",
    "x = " + "9" * 50_000,
])
def test_parse_python_on_the_known_shapes(text):
    with pytest.raises(SyntaxError):
        parse_python(text)


def test_the_issue_s_replies_are_read_as_no_call():
    deep = "<tool_call>" + "[" * 1000 + "</tool_call>"
    assert bfcl_format.decode_calls(deep) == []
    assert replies.tool_calls(deep) == [] and replies.malformed_tool_call(deep)
    terms = "1. f(a=" + "+".join(["1"] * 5000) + ") ANSWER: 1"
    assert solutions.tool_use_actions(terms) is None
    designer = "```python\nclass XEnv:\n    x = " + "+".join(["1"] * 5000) + "\n```"
    assert extract_program(designer) is not None  # handed on; the sandbox's verdict says why
    assert static_problems("class XEnv:\n    x = " + "+".join(["1"] * 100_000))[0].startswith(
        "syntax error")


@pytest.mark.parametrize("text", [
    "<tool_call>" * 20000, "<tool_call>" + '{"name": "a", "arguments": {' * 2500 + "</tool_call>",
    "<tool_call>" + "<function=a>" * 10000 + "</tool_call>", "\\boxed{" * 20000,
    "<answer>" * 20000, "<answer>" * 10000 + "\\boxed{" * 10000 + "}",
])
def test_readers_stay_linear_on_thousands_of_unclosed_tags(text):
    # Once quadratic: a regular expression rescanning to the end from every unclosed tag took
    # up to a minute on such a reply or solution.
    import time

    started = time.perf_counter()
    replies.tool_calls(text)
    answer_claims(text)
    from spade_core.selfplay.hint_writer import secrets_of

    secrets_of([text])
    contradicts_answer(text, [text], answers.answers_match)
    assert time.perf_counter() - started < 2.0
