"""The tool-use prelude's base class, ToolUseBaseEnv: tool schemas, dispatch, argument
validation against the schemas, turn limits and step-by-step instructions."""

from __future__ import annotations

import json

import pytest

from fakes.in_process import FakeInProcessSession
from fakes.tool_use_programs import FAMILY, NOTES_PROGRAM, call, seed_program


@pytest.fixture
def notes():
    session = FakeInProcessSession(NOTES_PROGRAM, FAMILY)
    session.env.max_turns = 6
    session.reset(5)
    return session


def test_reset_returns_native_tool_schemas():
    session = FakeInProcessSession(NOTES_PROGRAM, FAMILY)
    observation, info = session.reset(1)
    assert "Find the note" in observation
    tools = FAMILY.tools_from_info(info)
    assert [t["function"]["name"] for t in tools] == ["list_notes", "read_note", "tag_note"]
    assert all(t["type"] == "function" for t in tools)
    assert tools[1]["function"]["parameters"]["required"] == ["note_id"]
    json.dumps(tools)


def test_dispatch_and_answer(notes):
    result = notes.step(call("read_note", note_id=3))
    assert result.observation.startswith("Tool result:\nNote 3: about")
    assert (result.reward, result.terminated, result.truncated) == (0.0, False, False)
    wrong = notes.step("<answer>4</answer>")
    assert wrong.reward == 0.0 and not wrong.terminated and "Incorrect" in wrong.observation
    right = notes.step("<answer> 3 </answer>")
    assert (right.reward, right.terminated) == (1.0, True)


@pytest.mark.parametrize("action,needle", [
    (call("read_note"), "missing required argument 'note_id'"),
    (call("read_note", note_id="3"), "'note_id' must be integer, got string '3'"),
    (call("tag_note", note_id=3, tag="maybe"), "'tag' must be one of ['keep', 'drop']"),
    (call("tag_note", note_id=3, tag="keep", colour="red"), "unknown argument 'colour'"),
    (call("fly"), "Unknown tool 'fly'. Available tools: list_notes, read_note, tag_note."),
    ("<tool_call>{not json}</tool_call>", "Format error: the tool call is not valid JSON"),
    ('<tool_call>{"name": "read_note", "arguments": [3]}</tool_call>',
     "arguments must be a JSON object"),
    ("I think the answer is three.", "Format error: call a tool"),
])
def test_invalid_actions_get_helpful_observations(notes, action, needle):
    result = notes.step(action)
    assert needle in result.observation
    assert (result.reward, result.terminated) == (0.0, False)
    assert notes.env._state["tags"] == {}


def test_schema_errors_name_the_expected_signature(notes):
    result = notes.step(call("tag_note", note_id=3))
    assert "Expected tag_note(note_id: integer, tag: string)" in result.observation


def test_tool_exceptions_become_observations(notes):
    result = notes.step(call("read_note", note_id=99))
    assert "Error calling read_note: KeyError" in result.observation and not result.terminated


def test_several_calls_and_qwen_xml_calls_in_one_turn(notes):
    xml = ("<tool_call>\n<function=tag_note>\n<parameter=note_id>\n2\n</parameter>\n"
           "<parameter=tag>\ndrop\n</parameter>\n</function>\n</tool_call>")
    result = notes.step(call("list_notes") + "\n" + xml)
    assert "Tool result 1:\n1, 2, 3, 4, 5" in result.observation
    assert "Tool result 2:\nTagged 2 as drop" in result.observation
    assert notes.env._state["tags"] == {2: "drop"}
    assert notes.env.turn_count == 1


def test_calls_then_answer_in_the_same_turn(notes):
    result = notes.step(call("read_note", note_id=3) + " <answer>3</answer>")
    assert result.terminated and result.reward == 1.0
    assert result.observation.startswith("Tool result:\nNote 3")


def test_turn_limit_truncates_and_reveals_the_solution(notes):
    for _ in range(5):
        assert not notes.step(call("list_notes")).truncated
    last = notes.step(call("list_notes"))
    assert last.truncated and not last.terminated and "Time up. Solution:" in last.observation


def test_reset_clears_turns_and_history(notes):
    notes.step(call("list_notes"))
    notes.reset(5)
    assert notes.env.turn_count == 0 and notes.env._call_history == []


def test_instructions_are_revealed_step_by_step():
    session = FakeInProcessSession(seed_program("file_organizer"), FAMILY)
    first, _ = session.reset(0)
    assert first.startswith("Go to the")
    early = session.step("<answer>done</answer>")
    assert "still on step 1/4" in early.observation and not early.terminated
    root = "/home/" + session.env.project
    moved = session.step(call("cd", path=root))
    assert "[STEP 1 COMPLETE" in moved.observation and "Make a folder" in moved.observation
    assert moved.info == {"step": 1, "steps_total": 4}
    # Meeting a later criterion does not skip the current instruction.
    session.step(call("cd", path="/home"))
    assert session.env._current_msg == 1


def test_programs_with_their_own_advance_are_not_advanced_twice():
    session = FakeInProcessSession(seed_program("calendar_booking"), FAMILY)
    session.reset(2)
    listed = session.step(call("list_events", date=session.env.day))
    assert session.env._current_msg == 1 and listed.observation.count("[STEP") == 1
