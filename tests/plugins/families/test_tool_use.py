"""The tool-use family: solution parsing, its static checks, the reference protocol, the
database option and its seeds' goal states. The base class the programs subclass is tested in
tests/plugins/families/preludes/test_tool_use_base.py."""

from __future__ import annotations

import pytest

from spade_core.validation import validate

from fakes.in_process import FakeInProcessSession
from fakes.tool_use_programs import FAMILY, NOTES_PROGRAM, call, seed_program
from plugins.families.solutions import tool_use_actions
from plugins.families.tool_use import ToolUseFamily


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
