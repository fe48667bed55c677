"""LiveCodeBench's test runner as a sandbox scorer, run in this process on trusted candidates:
stdin and functional problems, packed private tests read by an unpickler that refuses every
global, outputs compared as LiveCodeBench compares them, and returned values taken as plain data
only. The suite's tests run it in the sandbox (tests/plugins/evals/test_livecodebench_suite.py)."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib

import pytest

from plugins.evals.preludes.lcb_scorer import plain, score_request, stdout_matches, unpack_tests

SUMS = {"mode": "stdin", "tests": [{"input": "2\n1 2\n", "output": "3\n"},
                                   {"input": "3\n4 5 6\n", "output": "15"}]}
PAIRS = {"mode": "call", "fn_name": "twice", "tests": [{"input": "3", "output": "[3, 3]"}]}


def _packed(value) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(value))).decode("ascii")


@pytest.mark.parametrize("code, score", [
    ("n = int(input())\nprint(sum(map(int, input().split())))", 1.0),
    ("import sys\ndef main():\n    sys.stdin.readline()\n"
     "    sys.stdout.write(str(sum(map(int, sys.stdin.readline().split()))) + '\\n')\n"
     "if __name__ == '__main__':\n    main()", 1.0),
    ("input()\nprint(0)", 0.0), ("this is not python", 0.0), ("", 0.0),
])
def test_stdin_problems_pass_only_on_every_test(code, score):
    assert score_request({**SUMS, "code": code}) == score


@pytest.mark.parametrize("code, score", [
    ("class Solution:\n    def twice(self, a):\n        return [a, a]", 1.0),
    ("class Solution:\n    def twice(self, a):\n        return (a, a)", 1.0),  # as LCB accepts
    ("def twice(a):\n    return [a, a]", 1.0),
    ("class Yes:\n    def __eq__(self, other):\n        return True\n"
     "class Solution:\n    def twice(self, a):\n        return Yes()", 0.0),
    ("class Solution:\n    def twice(self, a):\n        raise ValueError(a)", 0.0),
])
def test_call_problems_compare_plain_returned_data(code, score):
    assert score_request({**PAIRS, "code": code}) == score
    assert score_request({**PAIRS, "fn_name": "_private", "code": code}) == 0.0


def test_packed_tests_are_read_and_anything_but_a_json_string_is_refused():
    tests = [{"input": "1\n5\n", "output": "5"}]
    packed = _packed(json.dumps(tests))
    assert unpack_tests(packed) == tests
    assert score_request({"code": "input()\nprint(input())", "packed": [packed]}) == 1.0

    class Payload:
        def __reduce__(self):
            return (os.getcwd, ())

    for hostile, message in ((_packed(Payload()), "only plain values"),
                             (_packed([1, 2]), "not a JSON string"),
                             (_packed(json.dumps({"a": 1})), "not a list")):
        with pytest.raises(Exception, match=message):
            unpack_tests(hostile)
        assert score_request({"code": "print(1)", "packed": [hostile]}) == 0.0


@pytest.mark.parametrize("produced, expected, same", [
    ("3.0  \n\n", "3", True), ("1 2\n", "1.00 2", True), ("a b", "a  b", False),
    ("1\n2", "1", False), ("yes", "Yes", False),
])
def test_stdout_compares_stripped_lines_as_text_or_decimals(produced, expected, same):
    assert stdout_matches(produced, expected) is same


def test_plain_keeps_builtin_data_and_refuses_the_rest():
    assert plain((1, [2.5, "x"], {"k": None})) == [1, [2.5, "x"], {"k": None}]
    with pytest.raises(Exception, match="not plain data"):
        plain(object())
    with pytest.raises(Exception, match="nested too deep"):
        deep: list = []
        for _ in range(200):
            deep = [deep]
        plain(deep)
