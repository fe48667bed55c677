"""``ToolUseBaseEnv``: the base class of tool-use environment programs (SPADE format).

Trusted prelude source: the sandbox runs it unrestricted in its worker and injects the names in
``__all__`` into each tool-use program, which subclasses ``ToolUseBaseEnv`` without importing it.
Untrusted subclasses only write ``reset()``, ``solution()`` and ``tool_*`` methods; this class does
what restricted code cannot: JSON parsing of ``<tool_call>`` blocks, dispatch by name to ``tool_*``
methods, argument validation against the program's own JSON schemas, turn limits, answer checking
and BFCL-style instructions revealed one at a time as their criteria are met. A program may keep
its state in an in-memory SQLite database (``create_database``, the ``Database`` of
``sql_database.py``) and check success on the final state (``goal_reached``).
"""

import json as _json
import re as _re

if "answers_match" not in globals():  # imported as a module rather than run as a prelude
    from plugins.families.answers import answers_match
if "Database" not in globals():
    from plugins.families.preludes.sql_database import Database, DatabaseError

# Run as a prelude after the answer helpers, the exported names add to theirs.
__all__ = list(globals().get("__all__", [])) + ["ToolUseBaseEnv"]

_TOOL_CALL = _re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", _re.DOTALL)
_ANSWER = _re.compile(r"<answer>(.*?)</answer>", _re.DOTALL)
_CLOSED_TOOL_CALL = _re.compile(r"<tool_call>(.*?)</tool_call>", _re.DOTALL)
_XML_FUNCTION = _re.compile(r"<function=([\w.\-]+)>(.*?)(?:</function>|$)", _re.DOTALL)
_XML_PARAMETER = _re.compile(r"<parameter=([\w\-]+)>(.*?)</parameter>", _re.DOTALL)
#: The action that asks an instance how its ``_message_criteria`` fare on its current ``_state``
#: (the "criteria at reset" gate sends it right after ``reset``); never a turn of the episode.
CRITERIA_PROBE = "<spade-criteria-probe/>"
#: The action that asks an instance for its final-state report: whether ``goal_reached()`` holds
#: and a digest of its database (validation sends it after reset and after the solution's replay);
#: never a turn of the episode.
STATE_PROBE = "<spade-state-probe/>"
_TYPE_ALIASES = {
    "str": "string", "string": "string", "int": "integer", "integer": "integer",
    "float": "number", "number": "number", "double": "number", "bool": "boolean",
    "boolean": "boolean", "list": "array", "array": "array", "tuple": "array",
    "dict": "object", "object": "object", "null": "null", "none": "null",
}


def _type_ok(value, json_type):
    if json_type == "string":
        return isinstance(value, str)
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    if json_type == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if json_type == "boolean":
        return isinstance(value, bool)
    if json_type == "array":
        return isinstance(value, list)
    if json_type == "object":
        return isinstance(value, dict)
    if json_type == "null":
        return value is None
    return True


def _json_type_name(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _schema_types(schema):
    declared = schema.get("type") if isinstance(schema, dict) else None
    declared = declared if isinstance(declared, list) else [declared]
    known = [_TYPE_ALIASES.get(str(t).lower()) for t in declared if t is not None]
    return [t for t in known if t]


def _validate_value(name, value, schema, problems):
    if not isinstance(schema, dict):
        return
    types = _schema_types(schema)
    if types and not any(_type_ok(value, t) for t in types):
        problems.append(
            f"'{name}' must be {' or '.join(types)}, got {_json_type_name(value)} {value!r}"[:300])
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        problems.append(f"'{name}' must be one of {enum!r}, got {value!r}"[:300])
    for bound, fails in (("minimum", lambda v, b: v < b), ("maximum", lambda v, b: v > b)):
        limit = schema.get(bound)
        if isinstance(limit, (int, float)) and isinstance(value, (int, float)) \
                and not isinstance(value, bool) and fails(value, limit):
            problems.append(f"'{name}' must be {'>=' if bound == 'minimum' else '<='} {limit}")
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        for k, item in enumerate(value[:50]):
            _validate_value(f"{name}[{k}]", item, items, problems)


def _signature(name, parameters):
    """``cd(path: string, recursive?: boolean)``, for error observations."""
    if not isinstance(parameters, dict):
        return f"{name}()"
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or []
    parts = []
    if isinstance(properties, dict):
        for arg, schema in properties.items():
            types = _schema_types(schema) or ["any"]
            mark = "" if arg in required else "?"
            parts.append(f"{arg}{mark}: {'|'.join(types)}")
    return f"{name}({', '.join(parts)})"


def _probing_step(own_step):
    """A program's own ``step``, answering :data:`CRITERIA_PROBE` before it sees an action."""

    def step(self, action):
        if isinstance(action, str) and action == CRITERIA_PROBE:
            return self._criteria_report()
        if isinstance(action, str) and action == STATE_PROBE:
            return self._state_report()
        return own_step(self, action)

    step._spade_wrapped = True
    step.__doc__ = own_step.__doc__
    return step


class ToolUseBaseEnv:
    """Base environment for tool-use tasks.

    The agent acts with ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (several per
    turn allowed; Qwen-style ``<function=...><parameter=...>`` blocks are accepted too) and ends
    with ``<answer>...</answer>``. Subclasses set ``self._tools`` (``{name: {"description",
    "parameters"}}`` JSON schemas), ``self._state`` and ``self._expected_answer`` in ``reset``,
    and write one ``tool_<name>`` method per tool. Multi-step tasks also set
    ``self._user_messages``, ``self._message_criteria`` (callables on ``self._state``) and
    ``self._current_msg = 0``; the next instruction is revealed when the current one's criterion
    holds. ``reset`` returns the native tool schemas in ``info["tools"]``.
    """

    #: Most tool calls executed from one action; the rest are refused with a message.
    max_calls_per_turn = 8
    #: How ``step`` reads an action: ``"multi-call"`` (every call runs, then an answer is
    #: checked; format errors score 0) or ``"reference"`` (the SPADE reference's: an answer is
    #: checked first, only the first call runs, a malformed call scores -0.1). The family sets
    #: it from its ``protocol`` option when it builds the prelude.
    protocol = "multi-call"

    def __init__(self, max_turns=10, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self._db = None
        self._tools = {}
        self._state = {}
        self._call_history = []
        self._expected_answer = None
        self.reset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own_step = cls.__dict__.get("step")
        if own_step is not None and not getattr(own_step, "_spade_wrapped", False):
            cls.step = _probing_step(own_step)
        own_reset = cls.__dict__.get("reset")
        if own_reset is None or getattr(own_reset, "_spade_wrapped", False):
            return

        def reset(self, *args, **kw):
            self.turn_count = 0
            self._call_history = []
            self._close_database()
            result = own_reset(self, *args, **kw)
            if isinstance(result, tuple) and len(result) == 2:
                observation, info = result
            else:
                observation, info = result, {}
            info = dict(info) if isinstance(info, dict) else {}
            if "tools" not in info:
                info["tools"] = self.get_tools()
            return observation, info

        reset._spade_wrapped = True
        reset.__doc__ = own_reset.__doc__
        cls.reset = reset

    def reset(self, seed=None):
        """Generate the task, data, ``_tools`` and ``_expected_answer``. Subclasses override it."""
        raise NotImplementedError("a tool-use environment must define reset(seed=None)")

    def solution(self):
        """The tool calls and final answer that solve this instance, as text such as
        ``"1. cd(path='/x') 2. <answer>done</answer>"`` or a list of actions."""
        raise NotImplementedError("a tool-use environment must define solution()")

    # -- database and final state -------------------------------------------------------------

    def create_database(self, schema, rows=None):
        """A fresh in-memory SQLite database for this episode, kept as ``self._db`` and returned:
        ``schema`` is SQL text (``CREATE TABLE ...; CREATE TABLE ...``), ``rows`` maps a table to
        its seed rows (tuples in column order or dicts). Call it in ``reset``; the previous
        episode's database is closed first. See ``Database`` for what it offers."""
        self._close_database()
        self._db = Database(schema, rows)
        return self._db

    def _close_database(self):
        db = getattr(self, "_db", None)
        if isinstance(db, Database):
            db.close()
        self._db = None

    def goal_reached(self):
        """Override to check success on the final state (``self._db`` or ``self._state``):
        ``True`` when the task is done. While it is not overridden (``None``), only the answer
        counts. When it is, an ``<answer>`` is correct only if it returns ``True`` (and, when
        ``_expected_answer`` is set, the answer also matches it)."""
        return None

    def _goal_status(self):
        if type(self).goal_reached is ToolUseBaseEnv.goal_reached:
            return None
        try:
            return bool(self.goal_reached())
        except Exception:
            return False

    def _state_report(self):
        """The answer to :data:`STATE_PROBE`: ``{"goal": True/False/None, "digest": hex or
        None}`` (``None``: no state check, no database) in the step's info. Not a turn."""
        db = getattr(self, "_db", None)
        digest = None
        if isinstance(db, Database):
            try:
                digest = db.digest()
            except DatabaseError as exc:
                digest = f"unreadable: {exc}"
        report = {"goal": self._goal_status(), "digest": digest}
        return "state probe", 0.0, False, False, {"final_state": report}

    # -- tools -------------------------------------------------------------------------------

    def get_tools(self):
        """The program's ``_tools`` as OpenAI function-calling schemas (``tools=`` of chat
        templates), made JSON-safe."""
        tools = []
        declared = self._tools if isinstance(self._tools, dict) else {}
        for name, spec in declared.items():
            spec = spec if isinstance(spec, dict) else {}
            parameters = spec.get("parameters")
            if not isinstance(parameters, dict):
                parameters = {"type": "object", "properties": {}}
            tools.append({"type": "function", "function": {
                "name": str(name),
                "description": str(spec.get("description", "")),
                "parameters": parameters,
            }})
        return _json.loads(_json.dumps(tools, default=str))

    def _validate_arguments(self, name, arguments):
        """Problems with ``arguments`` for tool ``name`` under its declared schema (empty when
        they are fine or the tool declares no schema)."""
        spec = self._tools.get(name) if isinstance(self._tools, dict) else None
        parameters = spec.get("parameters") if isinstance(spec, dict) else None
        if not isinstance(parameters, dict):
            return []
        properties = parameters.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = parameters.get("required")
        required = required if isinstance(required, list) else []
        problems = [f"missing required argument '{arg}'" for arg in required
                    if arg not in arguments]
        extra = parameters.get("additionalProperties", False)
        for arg, value in arguments.items():
            if arg in properties:
                _validate_value(arg, value, properties[arg], problems)
            elif properties and extra is not True:
                problems.append(f"unknown argument '{arg}'")
        return problems

    def execute_tool(self, name, arguments):
        """Run one tool call: ``{"output": str, "returncode": 0 on success else 1}``."""
        method = getattr(self, f"tool_{name}", None) if isinstance(name, str) else None
        if method is None or not callable(method):
            available = ", ".join(str(k) for k in self._tools) or "none"
            return {"output": f"Unknown tool '{name}'. Available tools: {available}.",
                    "returncode": 1}
        problems = self._validate_arguments(name, arguments)
        if problems:
            expected = _signature(name, (self._tools.get(name) or {}).get("parameters"))
            return {"output": f"Error: invalid arguments for {name}: {'; '.join(problems)}. "
                              f"Expected {expected}.", "returncode": 1}
        try:
            result = method(**arguments)
        except TypeError as exc:
            expected = _signature(name, (self._tools.get(name) or {}).get("parameters"))
            return {"output": f"Error calling {name}: {exc}. Expected {expected}.",
                    "returncode": 1}
        except Exception as exc:  # the tool's own failure is an observation, not a crash
            return {"output": f"Error calling {name}: {type(exc).__name__}: {exc}",
                    "returncode": 1}
        self._call_history.append({"name": name, "arguments": arguments, "result": str(result)})
        output = str(result)
        if self._auto_advance():
            output += self._advance_if_done()
        return {"output": output, "returncode": 0}

    # -- multi-step instructions --------------------------------------------------------------

    def _multi_step(self):
        messages = getattr(self, "_user_messages", None)
        return isinstance(messages, (list, tuple)) and isinstance(
            getattr(self, "_current_msg", None), int) and len(messages) > 0

    def _auto_advance(self):
        # Programs that write their own _advance_if_done call it from their tools (SPADE format).
        own = getattr(type(self), "_advance_if_done", None)
        return self._multi_step() and own is ToolUseBaseEnv._advance_if_done and isinstance(
            getattr(self, "_message_criteria", None), (list, tuple))

    def _advance_if_done(self):
        """Move to the next instruction when the current one's criterion holds on ``_state``;
        returns the text to append to the tool result (the next instruction, or the completion
        marker)."""
        if not self._multi_step():
            return ""
        criteria = getattr(self, "_message_criteria", None) or []
        messages = self._user_messages
        if self._current_msg >= len(messages) or self._current_msg >= len(criteria):
            return ""
        try:
            met = bool(criteria[self._current_msg](self._state))
        except Exception:
            met = False
        if not met:
            return ""
        self._current_msg += 1
        if self._current_msg >= len(messages):
            return "\n\n[ALL STEPS COMPLETE] Submit <answer>done</answer>."
        return (f"\n\n[STEP {self._current_msg} COMPLETE \u2014 NEW INSTRUCTION] "
                f"{messages[self._current_msg]}")

    def _criteria_report(self):
        """The answer to :data:`CRITERIA_PROBE`: each ``_message_criteria`` callable applied to
        ``_state`` here, in the sandbox; the step's info says how many there are and which raised
        (``{"criteria": n, "raised": [{"index": i, "error": "KeyError: 'x'"}]}``; ``n`` is 0 when
        the program has no criteria or no state). Not a turn: nothing is counted or changed but
        what a criterion itself changes."""
        criteria = getattr(self, "_message_criteria", None)
        state = getattr(self, "_state", None)
        if not isinstance(criteria, (list, tuple)) or state is None:
            criteria = ()
        raised = []
        for index, criterion in enumerate(criteria):
            try:
                criterion(state)
            except Exception as exc:
                raised.append({"index": index, "error": f"{type(exc).__name__}: {exc}"[:200]})
        report = {"criteria": len(criteria), "raised": raised}
        return "criteria probe", 0.0, False, False, {"criteria_at_reset": report}

    def _progress_info(self):
        if not self._multi_step():
            return {}
        return {"step": min(self._current_msg, len(self._user_messages)),
                "steps_total": len(self._user_messages)}

    # -- answers ------------------------------------------------------------------------------

    def _check_answer(self, answer):
        """Tolerant comparison with ``_expected_answer``: case-insensitive text, numbers within
        0.01 (the SPADE default), or equivalent expressions. Multi-step tasks also require every
        instruction to be complete."""
        if self._multi_step() and self._current_msg < len(self._user_messages):
            return False
        goal = self._goal_status()
        if goal is False:
            return False
        if self._expected_answer is None:
            return goal is True
        given, expected = str(answer).strip(), str(self._expected_answer).strip()
        if given.lower() == expected.lower():
            return True
        try:
            g = float(given.replace("$", "").replace(",", "").strip())
            e = float(expected.replace("$", "").replace(",", "").strip())
            return abs(g - e) < 0.01
        except (TypeError, ValueError):
            pass
        return answers_match(given, expected)

    def _incorrect_answer_feedback(self):
        base = "Incorrect. Keep using tools."
        if self._multi_step() and self._current_msg < len(self._user_messages):
            index = self._current_msg
            return (f"{base} Not all steps are complete \u2014 you are still on step "
                    f"{index + 1}/{len(self._user_messages)}: \"{self._user_messages[index]}\" "
                    "Complete this step with the tools before submitting <answer>done</answer>.")
        return base

    def _obs_suffix(self):
        """Kept for SPADE programs that call it; tools travel as native schemas instead."""
        return ""

    def _solution_text(self):
        try:
            return str(self.solution())
        except Exception as exc:
            return f"(solution() failed: {type(exc).__name__})"

    # -- protocol -----------------------------------------------------------------------------

    @staticmethod
    def _parse_call(block):
        """``(name, arguments, error)`` from the inside of one ``<tool_call>`` block."""
        xml = _XML_FUNCTION.search(block)
        if xml:
            arguments = {}
            for key, raw in _XML_PARAMETER.findall(xml.group(2)):
                raw = raw.strip()
                try:
                    arguments[key] = _json.loads(raw)
                except (ValueError, RecursionError):  # nested past the limit: kept as text
                    arguments[key] = raw
            return xml.group(1), arguments, None
        try:
            call = _json.loads(block.strip())
        except (ValueError, RecursionError) as exc:
            return None, None, f"the tool call is not valid JSON ({type(exc).__name__})" \
                if isinstance(exc, RecursionError) else \
                f"the tool call is not valid JSON ({exc})"
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return None, None, 'a tool call must be {"name": "<tool>", "arguments": {...}}'
        arguments = call.get("arguments", call.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = _json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError):
                return call["name"], None, "the arguments string is not valid JSON"
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return call["name"], None, "arguments must be a JSON object"
        return call["name"], arguments, None

    def step(self, action):
        """Run the tool calls in ``action``, then check an ``<answer>`` if there is one (see
        :attr:`protocol`)."""
        if isinstance(action, str) and action == CRITERIA_PROBE:
            return self._criteria_report()
        if isinstance(action, str) and action == STATE_PROBE:
            return self._state_report()
        if self.protocol == "reference":
            return self._reference_step(action)
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        action = action if isinstance(action, str) else str(action)
        blocks = _TOOL_CALL.findall(action)
        answer = _ANSWER.search(action)
        info = {}
        outputs = []
        for index, block in enumerate(blocks):
            if index >= self.max_calls_per_turn:
                outputs.append(f"Skipped {len(blocks) - index} more tool calls: at most "
                               f"{self.max_calls_per_turn} per turn.")
                break
            name, arguments, error = self._parse_call(block)
            if error:
                info["error"] = "format"
                outputs.append(f"Format error: {error}. Use <tool_call>{{\"name\": \"<tool>\", "
                               f"\"arguments\": {{...}}}}</tool_call>.")
                continue
            outputs.append(self.execute_tool(name, arguments)["output"])
        info.update(self._progress_info())
        if answer is not None:
            if self._check_answer(answer.group(1).strip()):
                return self._with_tools(outputs, "Correct!"), 1.0, True, False, info
            feedback = self._incorrect_answer_feedback()
            if truncated:
                feedback = f"Wrong answer. Time up. Solution:\n{self._solution_text()}"
            return self._with_tools(outputs, feedback), 0.0, False, truncated, info
        if not blocks:
            info["error"] = "format"
            observation = ("Format error: call a tool with <tool_call>{\"name\": ..., "
                           "\"arguments\": {...}}</tool_call>, or submit <answer>result</answer>.")
        elif len(outputs) == 1:
            observation = f"Tool result:\n{outputs[0]}"
        else:
            observation = "\n\n".join(f"Tool result {k + 1}:\n{out}"
                                      for k, out in enumerate(outputs))
        if truncated:
            observation += f"\n\nTime up. Solution:\n{self._solution_text()}"
        return observation, 0.0, False, truncated, info

    def _reference_step(self, action):
        """One reply under the reference's protocol: an ``<answer>`` wins over any call; else the
        first closed ``<tool_call>`` runs and the rest are ignored. No closed call, or a call that
        is neither Qwen XML nor a JSON object, scores -0.1; an object without a known tool name
        runs as an unknown tool (0.0), and arguments that are not an object are replaced by none.
        At the turn limit every non-answer ends the episode with the solution shown."""
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        action = action if isinstance(action, str) else str(action)
        info = {}
        answer = _ANSWER.search(action)
        if answer is not None:
            info.update(self._progress_info())
            if self._check_answer(answer.group(1).strip()):
                return "Correct!", 1.0, True, False, info
            if truncated:
                return (f"Wrong answer. Time up. Solution:\n{self._solution_text()}", 0.0, False,
                        True, info)
            return self._incorrect_answer_feedback(), 0.0, False, False, info
        block = _CLOSED_TOOL_CALL.search(action)
        time_up = f"Time up. Solution:\n{self._solution_text()}" if truncated else ""
        if block is None:
            if time_up:
                return time_up, 0.0, False, True, info
            info["error"] = "format"
            return ("Format error: call a tool with <tool_call>{\"name\": ..., \"arguments\": "
                    "{...}}</tool_call>, or submit <answer>result</answer>.", -0.1, False, False,
                    info)
        text = block.group(1)
        name, arguments, error = self._parse_call(text)
        if error is not None and name is None and not self._json_object(text):
            if time_up:
                return time_up, 0.0, False, True, info
            info["error"] = "format"
            return (f"Format error: {error}. Use <tool_call>{{\"name\": \"<tool>\", "
                    f"\"arguments\": {{...}}}}</tool_call>.", -0.1, False, False, info)
        if error is not None:  # an object without a name (an unknown tool), or unreadable
            arguments = {}     # arguments, which the reference replaces by none
        result = self.execute_tool(name, arguments)
        info.update(self._progress_info())
        observation = f"Tool result:\n{result['output']}"
        if time_up:
            return f"{observation}\n\n{time_up}", 0.0, False, True, info
        return observation, 0.0, False, False, info

    @staticmethod
    def _json_object(text):
        try:
            return isinstance(_json.loads(text.strip()), dict)
        except (ValueError, RecursionError):
            return False

    @staticmethod
    def _with_tools(outputs, text):
        if not outputs:
            return text
        return "\n\n".join([f"Tool result:\n{out}" for out in outputs] + [text])

    def close(self):
        self._close_database()
