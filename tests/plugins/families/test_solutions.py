"""What ``solution()`` returns turned into replayable actions: tool-use step descriptions into
tool calls (unparsable ones left unverified, not guessed), reasoning answers into boxed moves."""

from __future__ import annotations

import pytest

from plugins.families.solutions import boxed_actions, tool_call_action, tool_use_actions


@pytest.mark.parametrize("solution,expected", [
    ("1. cd(path='/x') 2. <answer>done</answer>",
     [tool_call_action("cd", {"path": "/x"}), "<answer>done</answer>"]),
    ('1. mv(src="a.txt", dst="b") -> Moved\n2. ls()\nFinal answer: b/a.txt',
     [tool_call_action("mv", {"src": "a.txt", "dst": "b"}), tool_call_action("ls", {}),
      "<answer>b/a.txt</answer>"]),
    ("transfer(amount=12.5, to='AC-1', flags=[1, 2]) then <answer>12.50</answer>",
     [tool_call_action("transfer", {"amount": 12.5, "to": "AC-1", "flags": [1, 2]}),
      "<answer>12.50</answer>"]),
    (['<tool_call>{"name": "ls", "arguments": {}}</tool_call>', "<answer>x</answer>"],
     ['<tool_call>{"name": "ls", "arguments": {}}</tool_call>', "<answer>x</answer>"]),
    (["ls()", "cd(path='/a')", "<answer>ok</answer>"],
     [tool_call_action("ls", {}), tool_call_action("cd", {"path": "/a"}), "<answer>ok</answer>"]),
])
def test_solution_descriptions_parse_into_actions(solution, expected):
    assert tool_use_actions(solution) == expected


@pytest.mark.parametrize("solution", [
    "Navigate to the folder, create the archive and move the report. ANSWER: done",
    "1. cd(path=os.getcwd()) 2. <answer>done</answer>",
    "1. cd(path='/x') 2. mkdir(name='y')",
    "", None, 42, ["cd(path='/x')"],
])
def test_unparsable_solutions_are_unverified_not_guessed(solution):
    assert tool_use_actions(solution) is None


def test_positional_arguments_need_the_schema():
    tools = [{"type": "function", "function": {"name": "cd", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}]
    assert tool_use_actions("1. cd('/x') 2. <answer>ok</answer>") is None
    assert tool_use_actions("1. cd('/x') 2. <answer>ok</answer>", tools)[0] == \
        tool_call_action("cd", {"path": "/x"})


def test_boxed_actions_for_reasoning_solutions():
    assert boxed_actions("42") == ["\\boxed{42}"]
    assert boxed_actions(7) == ["\\boxed{7}"]
    assert boxed_actions(["\\boxed{up}", "left"]) == ["\\boxed{up}", "\\boxed{left}"]
    assert boxed_actions(None) is None and boxed_actions([]) is None and boxed_actions("") is None
