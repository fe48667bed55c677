"""The tool-use family: ToolUseBaseEnv's protocol (dispatch, schema validation, turn limits,
step-by-step instructions), solution parsing, and the family's static checks."""

from __future__ import annotations

import json

import pytest

from spade_core.validation import validate

from fakes.in_process import FakeInProcessSession
from plugins.families.solutions import tool_call_action, tool_use_actions
from plugins.families.tool_use import ToolUseFamily

FAMILY = ToolUseFamily()

# A single-task program written the way SPADE's generated tool-use programs are: typing import,
# random.seed, a description-style solution with "->" results and "ANSWER:".
NOTES_PROGRAM = '''
import random
from typing import Tuple


class NoteFinderEnv(ToolUseBaseEnv):
    def reset(self, seed=None) -> Tuple[str, dict]:
        if seed is not None:
            random.seed(seed)
        topics = ["rivers", "comets", "ferns", "glaciers", "owls"]
        random.shuffle(topics)
        self._state = {"notes": {i + 1: t for i, t in enumerate(topics)}, "tags": {}}
        self.topic = topics[2]
        self._expected_answer = "3"
        self._tools = {
            "list_notes": {"description": "List note ids.",
                           "parameters": {"type": "object", "properties": {}}},
            "read_note": {"description": "Read one note.",
                          "parameters": {"type": "object",
                                         "properties": {"note_id": {"type": "integer"}},
                                         "required": ["note_id"]}},
            "tag_note": {"description": "Tag a note.",
                         "parameters": {"type": "object", "properties": {
                             "note_id": {"type": "integer"},
                             "tag": {"type": "string", "enum": ["keep", "drop"]}},
                             "required": ["note_id", "tag"]}},
        }
        return (f"Find the note about {self.topic} and answer its id.", {})

    def tool_list_notes(self):
        return ", ".join(str(k) for k in self._state["notes"])

    def tool_read_note(self, note_id):
        return f"Note {note_id}: about {self._state['notes'][note_id]}"

    def tool_tag_note(self, note_id, tag):
        self._state["tags"][note_id] = tag
        return f"Tagged {note_id} as {tag}"

    def solution(self) -> str:
        return ('1. list_notes() -> 1, 2, 3, 4, 5 '
                '2. read_note(note_id=3) -> Note 3: about ' + self.topic + ' '
                'ANSWER: 3')
'''


def call(name, **arguments) -> str:
    return tool_call_action(name, arguments)


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


def seed_program(name: str) -> str:
    return next(p.source for p in FAMILY.seed_programs() if p.description.startswith(name))


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


# ------------------------------------------------ a solution description, replayed

def test_spade_description_with_results_and_answer_line():
    session = FakeInProcessSession(NOTES_PROGRAM, FAMILY)
    _, info = session.reset(0)
    actions = tool_use_actions(session.solution(), info["tools"])
    assert actions == [call("list_notes"), call("read_note", note_id=3), "<answer>3</answer>"]


# --------------------------------------------------------------------------- static checks

@pytest.mark.parametrize("source,needle", [
    ("class AEnv:\n    def reset(self, seed=None): pass\n", "must subclass ToolUseBaseEnv"),
    ("class A(ToolUseBaseEnv):\n    pass\n", "no environment class"),
    ("class AEnv(ToolUseBaseEnv):\n    pass\nclass BEnv(ToolUseBaseEnv):\n    pass\n",
     "several environment classes (AEnv, BEnv)"),
    ("class AEnv(ToolUseBaseEnv)\n", "syntax error"),
])
def test_static_problems(source, needle):
    problems = FAMILY.static_problems(source)
    assert problems and needle in problems[0]


def test_spade_programs_may_import_the_base_class_module():
    source = "from tool_use_base_env import ToolUseBaseEnv\n" + NOTES_PROGRAM
    session = FakeInProcessSession(source, FAMILY)
    _, info = session.reset(2)
    actions = FAMILY.solution_actions(session.solution(), FAMILY.tools_from_info(info))
    assert [session.step(a) for a in actions][-1].reward == 1.0


def test_static_check_accepts_a_helper_base():
    source = ("class CommonEnv(ToolUseBaseEnv):\n    pass\n"
              "class ShopEnv(CommonEnv):\n    def reset(self, seed=None): pass\n")
    assert FAMILY.static_problems(source) == []


@pytest.mark.slow
def test_spade_style_program_is_valid_in_the_real_sandbox():
    from spade_core.components import BuildContext
    from spade_core.plugins import load_plugins

    component = load_plugins().registry.components.get(("sandbox", "process"))
    if component is None:
        pytest.skip("no sandbox named 'process' is registered yet")
    sandbox = component.build(component.options() if component.options else {}, BuildContext())
    try:
        [verdict] = validate(sandbox, [NOTES_PROGRAM], family=FAMILY)
        assert verdict.valid and verdict.message == "valid", verdict
        assert verdict.details["solution"]["actions"] == 3
    finally:
        sandbox.close()


class FakeSolutionBackend:
    """Plays a scripted list of replies and records the tool schemas each call received."""

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.tools_seen = list(replies), []

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        from spade_core.interfaces.backend import Generation

        self.tools_seen.append(tools)
        return [Generation(text=self.replies.pop(0)) for _ in conversations]


def test_loop_rollouts_pass_native_tools_and_solve_a_seed():
    from fakes.in_process import FakeInProcessSandbox
    from spade_core.selfplay.rollouts import RolloutRequest, run_rollouts

    source = seed_program("product_order")
    probe = FakeInProcessSession(source, FAMILY)
    _, info = probe.reset(9)
    actions = FAMILY.solution_actions(probe.solution(), FAMILY.tools_from_info(info))
    backend = FakeSolutionBackend(actions)
    request = RolloutRequest(env_id="product", program=source, family=FAMILY, seeds=[9])
    [[episode]], _ = run_rollouts(FakeInProcessSandbox(), backend, [request],
                                  max_turns=len(actions), max_new_tokens=64, temperature=0.0,
                                  seed=0)
    assert episode.reward == 1.0 and episode.turns[-1].terminated
    assert backend.tools_seen[0] == info["tools"]


# ------------------------------------------------------------- protocol: reference

REFERENCE = ToolUseFamily(protocol="reference")


class FakeScriptedToolBackend:
    """One scripted reply per call, for every conversation of the call."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        from spade_core.interfaces.backend import Generation

        reply = self.replies.pop(0)
        return [Generation(text=reply) for _ in conversations]



def test_reference_protocol_in_the_real_sandbox(process_sandbox):
    """Answer first, one call per reply, -0.1 for a malformed call (0.0 for an unknown tool), and
    a reply with a <tool_call> tag but no readable call masked and answered with a reminder."""
    from plugins.families.replies import FORMAT_REMINDER
    from spade_core.selfplay.rollouts import RolloutRequest, run_rollouts
    from spade_core.selfplay.samples import masked_turns

    replies = [
        call("tag_note", note_id=1, tag="keep") + "<answer>4</answer>",  # answer wins: no call
        call("tag_note", note_id=2, tag="keep") + call("tag_note", note_id=4, tag="drop"),
        "<tool_call>{not json}</tool_call>",  # malformed with the tag: masked, -0.1
        "Let me think about it.",  # no tag: -0.1, trained on
        call("no_such_tool"),  # unknown tool: 0.0
        call("list_notes") + "<answer>3</answer>",
    ]
    request = RolloutRequest(env_id="notes", program=NOTES_PROGRAM, family=REFERENCE, seeds=[5])
    [[episode]], [[conversation]] = run_rollouts(
        process_sandbox, FakeScriptedToolBackend(replies), [request], max_turns=len(replies),
        max_new_tokens=64, temperature=0.0, seed=0)
    turns = episode.turns
    assert [t.reward for t in turns] == [0.0, 0.0, -0.1, -0.1, 0.0, 1.0]
    assert "Incorrect" in turns[0].observation and "Tagged" not in turns[0].observation
    assert turns[1].observation == "Tool result:\nTagged 2 as keep"  # the second call never ran
    assert turns[2].observation.startswith("Format error") and turns[4].observation.startswith(
        "Tool result:\nUnknown tool 'no_such_tool'")
    assert [t.masked for t in turns] == [False, False, True, False, False, False]
    assert episode.reward == 1.0 and turns[-1].terminated
    # The reminder follows the masked turn only; the conversation keeps every reply as written.
    users = [m["content"] for m in conversation if m["role"] == "user"]
    assert users[3].endswith(FORMAT_REMINDER) and sum(FORMAT_REMINDER in u for u in users) == 1
    assert masked_turns(episode, conversation) == [6]
    assert conversation[6] == {"role": "assistant", "content": replies[2]}


def test_reference_protocol_prelude_and_instructions():
    assert "ToolUseBaseEnv.protocol = 'reference'" in REFERENCE.prelude
    assert "protocol = 'reference'" not in FAMILY.prelude
    assert "Call one tool per reply." in REFERENCE.agent_instructions()
    assert REFERENCE.masked_reply("<tool_call>{x") is not None
    assert FAMILY.masked_reply("<tool_call>{x") is None  # multi-call: nothing is masked
    session = FakeInProcessSession(NOTES_PROGRAM, REFERENCE)
    session.reset(5)
    assert session.step("<tool_call>[1]</tool_call>").reward == -0.1  # JSON, not an object
    assert session.step('<tool_call>{"arguments": {}}</tool_call>').reward == 0.0  # no name


# ------------------------------------------------------------------ database-backed environments

def _gold_and_session(name: str, seed: int = 3):
    session = FakeInProcessSession(seed_program(name), FAMILY)
    _, info = session.reset(seed)
    return session, FAMILY.solution_actions(session.solution(), FAMILY.tools_from_info(info))


@pytest.mark.parametrize("name", ["inventory_orders_db", "calendar_db"])
def test_database_seeds_reach_the_goal_state_only_with_the_gold_sequence(name):
    session, gold = _gold_and_session(name)
    assert session.env.goal_reached() is False  # doing nothing is not the goal
    assert session.step("<answer>done</answer>").reward == 0.0
    results = [session.step(action) for action in gold]
    assert results[-1].reward == 1.0 and results[-1].terminated
    assert session.env.goal_reached() is True


def test_a_wrong_order_leaves_the_goal_unreached_and_the_stock_check_refuses_too_many():
    session, gold = _gold_and_session("inventory_orders_db")
    env = session.env
    observation = session.step(call("place_order", customer_id=env._customer_id, sku=env._sku,
                                    quantity=env._stock_before + 1)).observation
    assert "the order was not created" in observation and "CHECK constraint" in observation
    assert env._db.scalar("SELECT count(*) FROM orders") == 0  # the transaction rolled back
    session.step(call("place_order", customer_id=env._customer_id, sku=env._sku, quantity=1))
    assert session.step("<answer>done</answer>").reward == 0.0
    assert env.goal_reached() is False


def test_database_api_returns_plain_rows_and_reset_gives_a_fresh_database():
    session, _ = _gold_and_session("inventory_orders_db")
    db = session.env._db
    rows = db.query("SELECT sku, stock FROM products ORDER BY sku")
    assert rows and all(type(r) is dict and set(r) == {"sku", "stock"} for r in rows)
    assert db.query_one("SELECT * FROM products WHERE sku = ?", ("none",)) is None
    assert db.tables() == ["customers", "orders", "products"]
    digest = db.digest()
    db.execute("DELETE FROM orders")
    assert db.digest() == digest  # nothing changed
    db.execute("UPDATE products SET stock = stock + 1")
    assert db.digest() != digest
    session.reset(3)
    assert session.env._db is not db and session.env._db.digest() == digest
    with pytest.raises(Exception, match="closed"):
        db.scalar("SELECT 1")


@pytest.mark.parametrize("sql, needle", [
    ("ATTACH DATABASE '/tmp/x.db' AS x", "not authorized"),
    ("SELECT load_extension('x')", "load_extension"),
    ("PRAGMA max_page_count = 1000000", "not authorized"),
    ("SELECT random()", "function: random"),
    ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c",
     "stopped"),
])
def test_database_refuses_escapes_and_stops_runaway_queries(sql, needle):
    from plugins.families.preludes.sql_database import Database, DatabaseError

    db = Database("CREATE TABLE t (x INTEGER);")
    with pytest.raises(DatabaseError, match=needle):
        db.query(sql)
    assert db.scalar("SELECT count(*) FROM t") == 0  # still usable afterwards
    with pytest.raises(DatabaseError, match="parameters must be"):
        db.query("SELECT ?", (object(),))


#: Run in a child process with a small CPU share (nice 3) while busy processes load every core:
#: a heavy but bounded statement (1,000,000 rows: about 17M of the 20M instructions, 0.3-0.5 s on
#: an idle core, several seconds here) and a runaway one.
_STATEMENTS_UNDER_LOAD = """
import json, os, time
os.nice(3)
from plugins.families.preludes.sql_database import Database, DatabaseError
db = Database("CREATE TABLE t (x INTEGER);")
out = {}
for name, limit in (("heavy", "WHERE i < 1000000"), ("runaway", "")):
    start = time.monotonic()
    try:
        out[name] = db.scalar("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                              + limit + ") SELECT count(*) FROM c")
    except DatabaseError as exc:
        out[name] = str(exc)
    out[name + "_seconds"] = round(time.monotonic() - start, 2)
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_statement_budget_counts_work_so_load_does_not_change_the_outcome():
    """Issue 48: the SQL prelude stopped a statement after 1 s of wall time, so a valid program
    was refused on a busy machine. The budget is now SQLite VM instructions (work done): a heavy
    but bounded statement finishes while both cores are loaded, and a runaway one is still
    stopped by the instruction budget, not by the wall-clock backstop."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(2 * (os.cpu_count() or 1))]
    try:
        result = subprocess.run([sys.executable, "-c", _STATEMENTS_UNDER_LOAD],
                                capture_output=True, text=True, timeout=100,
                                cwd=Path(__file__).parents[3])
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["heavy"] == 1_000_000, out
    assert "more than 20,000,000 SQLite instructions" in out["runaway"], out


def test_database_option_asks_the_designer_for_database_state():
    always = ToolUseFamily(database="always")
    target = always.design_target(0)
    assert target.variant["state"] == "database"
    assert "create_database" in always.target_brief(target)
    assert "goal_reached" in always.skeleton_for(target)[0]
    mixed = ToolUseFamily(database="mixed")
    assert [mixed.design_target(n).variant.get("state") for n in range(4)] == [
        None, "database", None, "database"]
    assert "DATABASE STATE" not in FAMILY.target_brief(FAMILY.design_target(1))
    with pytest.raises(ValueError, match="database must be one of"):
        ToolUseFamily(database="sometimes")


_DATABASE_VARIANT = '''
import random
import datetime

SCHEMA = "CREATE TABLE tasks (id INTEGER PRIMARY KEY, done INTEGER NOT NULL, note TEXT);"


class TaskDoneEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        self._id = rng.randint(1, 3)
        self.create_database(SCHEMA, {"tasks": [(k, 0, "") for k in (1, 2, 3)]})
        self._tools = {"finish": {"description": "Mark a task done.", "parameters": {
            "type": "object", "properties": {"task_id": {"type": "integer"}},
            "required": ["task_id"]}}}
        self._expected_answer = None
        return f"Mark task {self._id} done, then <answer>done</answer>.", {}

    def tool_finish(self, task_id):
        self._db.execute("UPDATE tasks SET done = 1, note = ? WHERE id = ?", (NOTE, task_id))
        return "ok"

    def goal_reached(self):
        return GOAL

    def solution(self):
        return f"1. finish(task_id={self._id}) 2. <answer>done</answer>"
'''


@pytest.mark.parametrize("note, goal, category", [
    ('""', 'self._db.scalar("SELECT done FROM tasks WHERE id = ?", (self._id,)) == 1', "ok"),
    ('""', "True", "trivial"),
    ("str(datetime.datetime.now().microsecond)",
     'self._db.scalar("SELECT done FROM tasks WHERE id = ?", (self._id,)) == 1',
     "nondeterministic"),
])
def test_validation_checks_the_final_state(process_sandbox, note, goal, category):
    program = _DATABASE_VARIANT.replace("NOTE", note).replace("GOAL", goal)
    [verdict] = validate(process_sandbox, [program], family=FAMILY)
    assert verdict.category == category, verdict.message
    if category == "ok":
        assert verdict.details["final_state"]["goal_after_solution"] is True
