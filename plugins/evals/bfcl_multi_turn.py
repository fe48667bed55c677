"""BFCL v4 multi-turn categories, played turn by turn against BFCL's own stateful simulators and
scored by BFCL's own ``multi_turn_checker``, offline.

The protocol follows BFCL's function-calling inference loop
(``bfcl_eval.model_handler.base_handler.BaseHandler.inference_multi_turn_FC``):

- an entry's function documents are those of its ``involved_classes``
  (``multi_turn_func_doc/``); in ``multi_turn_miss_func`` the ``missed_function`` documents are
  held out and added at their turn, whose (empty) user message becomes BFCL's
  ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``;
- per user turn the model is asked repeatedly; the ``<tool_call>`` blocks of a reply are decoded
  (``bfcl_format.decode_calls``), turned into Python call strings and executed by BFCL's
  ``execute_multi_turn_func_call`` against the entry's simulator instances (created from its
  ``initial_config``, kept for the whole entry); the results come back as the next message;
- a reply without a decodable call ends the turn; after more than ``MAXIMUM_STEP_LIMIT`` (20)
  steps with calls in one turn the entry is force-terminated (and fails unless that was its last
  turn, as BFCL scores it);
- the per-turn, per-step call strings go to ``multi_turn_checker`` with the possible answers,
  which re-executes both sides on fresh instances and compares state and results turn by turn.

Results are fed back as one user message in the tool-use family's observation format
(``Tool result:`` blocks), the protocol SPADE agents are trained on, instead of BFCL's OpenAI
``tool`` messages.

Containment: BFCL's helper runs each call string through ``eval`` in its own module. A call
string is built here only from a decoded call whose name is a public method of the entry's
simulator classes, whose argument names are identifiers and whose values are JSON values
(written with ``repr``); the exact string ``eval`` will see (after BFCL's own method prefixing)
is parsed and must be one call of that method with literal keyword arguments only. Anything else
is never given to BFCL: it is replaced by an empty string, which BFCL's helper reports as an
execution error without evaluating anything, and the model is told the call was refused.
(BFCL's prefixing also rewrites ``method(`` inside string arguments, as in BFCL's own runs; the
text stays inside the string literal, which the parse above checks.)
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import itertools
import json
import keyword
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSettings, GenerationBackend

from plugins.evals.bfcl_checker import INSTALL_HINT
from plugins.evals.bfcl_format import decode_calls, tool_schemas

#: Our category name -> BFCL's data file stem; all four run offline on the bundled simulators.
MULTI_TURN_CATEGORIES: dict[str, str] = {
    "multi_turn_base": "multi_turn_base",
    "multi_turn_miss_func": "multi_turn_miss_func",
    "multi_turn_miss_param": "multi_turn_miss_param",
    "multi_turn_long_context": "multi_turn_long_context",
}
#: The gold reply that ends a turn whose calls are done (the tool-use family's final answer).
TURN_DONE = "<answer>done</answer>"
#: The gold reply of a turn whose ground truth is no call (a missing parameter or function).
NO_CALL = ("I cannot do this with the functions and details I have; please give me what is "
           "missing.")
_UTILS = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils"
_CHECKER = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"
_run_numbers = itertools.count()


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "bfcl_eval":
            raise ConfigError(f"the bfcl multi-turn categories need the bfcl-eval package: "
                              f"{INSTALL_HINT} (--no-deps: its pins would downgrade numpy and "
                              "faiss)") from None
        raise ConfigError(f"the bfcl multi-turn simulators need {exc.name!r}, which bfcl-eval "
                          f"lists as a dependency: pip install {exc.name}") from None


@cache
def step_limit() -> int:
    """BFCL's own ``MAXIMUM_STEP_LIMIT`` (20 in bfcl-eval 2026.3.23)."""
    return int(_module("bfcl_eval.constants.default_prompts").MAXIMUM_STEP_LIMIT)


@cache
def additional_function_prompt() -> str:
    """The user message BFCL sends when held-out functions are added (``miss_func``)."""
    return str(_module("bfcl_eval.constants.default_prompts")
               .DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC)


@cache
def func_doc_files() -> dict[str, str]:
    """BFCL's function-document file (``multi_turn_func_doc/``) of each simulator class."""
    config = _module("bfcl_eval.constants.executable_backend_config")
    return dict(config.MULTI_TURN_FUNC_DOC_FILE_MAPPING)


@cache
def simulator_class(class_name: str) -> type:
    """A BFCL simulator class (``GorillaFileSystem``, ``TwitterAPI``, ...) by its name."""
    config = _module("bfcl_eval.constants.executable_backend_config")
    if class_name not in config.CLASS_FILE_PATH_MAPPING:
        raise ConfigError(f"bfcl multi-turn: unknown simulator class {class_name!r}")
    return getattr(_module(config.CLASS_FILE_PATH_MAPPING[class_name]), class_name)


def public_methods(instances: Sequence[object]) -> frozenset[str]:
    """The method names BFCL's helper binds to its simulator ``instances``, by its own rule
    (``inspect.ismethod``, no leading underscore): the only names a call string may use."""
    return frozenset(name for instance in instances
                     for name, _ in inspect.getmembers(instance, inspect.ismethod)
                     if not name.startswith("_"))


def entry_functions(entry: dict[str, Any], docs: dict[str, list[dict[str, Any]]]
                    ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The function documents shown from the first turn, and those held out per turn, as BFCL's
    ``populate_test_cases_with_predefined_functions`` builds them (docs of the involved classes
    in order; each missed function removed and kept for its turn)."""
    functions = [copy.deepcopy(doc) for name in entry["involved_classes"] for doc in docs[name]]
    held_out: dict[str, list[dict[str, Any]]] = {}
    for turn, names in entry.get("missed_function", {}).items():
        held_out[turn] = []
        for missed in names:
            for index, doc in enumerate(functions):
                if doc["name"] == missed:
                    held_out[turn].append(functions.pop(index))
                    break
    return functions, held_out


# -- call strings ------------------------------------------------------------------------------

def _is_json_value(value: Any, depth: int = 0) -> bool:
    if depth > 32:
        return False
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json_value(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_value(v, depth + 1) for k, v in value.items())
    return False


def call_string(name: str, arguments: dict[str, Any], methods: frozenset[str]) -> str | None:
    """``name(key=repr(value),...)`` as BFCL's ``convert_to_function_call`` writes a decoded
    call, or ``None`` when the call could run anything beyond one simulator method with literal
    arguments (see the module docstring)."""
    if name not in methods or not name.isidentifier() or keyword.iskeyword(name):
        return None
    parts = []
    for key, value in arguments.items():
        if not (isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)):
            return None
        if not _is_json_value(value):
            return None
        parts.append(f"{key}={value!r}")
    text = f"{name}({','.join(parts)})"
    # What BFCL's helper will eval: the same string with the method prefixed by its instance.
    prefixed = _module(_UTILS)._process_method_calls(text, {m: "instance" for m in methods})
    return text if _single_literal_call(prefixed, name, arguments) else None


def _single_literal_call(text: str, name: str, arguments: dict[str, Any]) -> bool:
    """Whether ``text`` is exactly ``instance.name(k=<literal>, ...)`` with ``arguments``."""
    try:
        tree = ast.parse(text, mode="eval")
        call = tree.body
        if not (isinstance(call, ast.Call) and not call.args
                and isinstance(call.func, ast.Attribute) and call.func.attr == name
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "instance"):
            return False
        if [k.arg for k in call.keywords] != list(arguments):
            return False
        return all(type(ast.literal_eval(k.value)) is type(arguments[k.arg])
                   for k in call.keywords if k.arg is not None)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return False


def gold_call(text: str, classes: tuple[str, ...]) -> dict[str, Any]:
    """A ground-truth call string (``sort('a.pdf')``) as a tool call ``{"name", "arguments"}``,
    positional arguments named by the simulator method's signature."""
    call = ast.parse(text, mode="eval").body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise ValueError(f"bfcl multi-turn: ground truth {text!r} is not a plain call")
    name = call.func.id
    arguments: dict[str, Any] = {}
    if call.args:
        method = next((getattr(simulator_class(c), name) for c in classes
                       if hasattr(simulator_class(c), name)), None)
        if method is None:
            raise ValueError(f"bfcl multi-turn: ground truth {text!r} names no simulator method")
        names = [p for p in inspect.signature(method).parameters if p != "self"]
        for param, node in zip(names, call.args):
            arguments[param] = ast.literal_eval(node)
    for kw in call.keywords:
        arguments[str(kw.arg)] = ast.literal_eval(kw.value)
    return {"name": name, "arguments": arguments}


def gold_replies(ground_truth: list[list[str]], classes: tuple[str, ...]) -> tuple[str, ...]:
    """The replies that solve an entry, assistant turn by assistant turn: per user turn, one
    reply with all its expected calls then :data:`TURN_DONE`; :data:`NO_CALL` for a turn whose
    ground truth is no call."""
    replies: list[str] = []
    for turn in ground_truth:
        if not turn:
            replies.append(NO_CALL)
            continue
        replies.append("\n".join("<tool_call>" + json.dumps(gold_call(c, classes)) + "</tool_call>"
                                 for c in turn))
        replies.append(TURN_DONE)
    return tuple(replies)


def observation(results: Sequence[str]) -> str:
    """Execution results as the tool-use family's observation text."""
    if len(results) == 1:
        return f"Tool result:\n{results[0]}"
    return "\n\n".join(f"Tool result {k + 1}:\n{out}" for k, out in enumerate(results))


# -- playing -----------------------------------------------------------------------------------

@contextmanager
def simulator_run() -> Iterator[str]:
    """A fresh BFCL ``model_name`` for one played entry: BFCL's helper keeps the simulator
    instances in its module globals under that name (inference, ``_eval`` and
    ``_ground_truth_eval`` runs); they are removed afterwards so that nothing leaks into the
    next sample or item."""
    run = f"spade_{os.getpid()}_{next(_run_numbers)}"
    try:
        yield run
    finally:
        namespace = vars(_module(_UTILS))
        for key in [k for k in namespace if k.startswith(run + "_")]:
            del namespace[key]


@dataclass
class Episode:
    """One entry played once: the conversation, the simulator instances (through BFCL's helper,
    under ``run``) and the call strings of every step of every turn."""

    item: EvalItem
    run: str
    max_steps: int
    functions: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, str]] = field(default_factory=list)
    turns: list[list[list[str]]] = field(default_factory=list)
    turn: int = -1
    steps: int = 0
    current: list[list[str]] = field(default_factory=list)
    done: bool = False
    force_quit: bool = False

    def __post_init__(self) -> None:
        self.entry: dict[str, Any] = self.item.data["entry"]
        self.classes: tuple[str, ...] = tuple(self.entry["involved_classes"])
        # As BFCL does first: create the instances (no call), here to learn their methods.
        _, instances = self._run([])
        self.methods = public_methods(list(instances.values()))
        self.functions = copy.deepcopy(self.item.data["functions"])
        self.tools: tuple[dict[str, Any], ...] = ()
        self.messages = [m for m in self.item.prompt if m["role"] == "system"]
        self._start_turn(0)

    def _run(self, strings: list[str]) -> tuple[list[str], dict[str, Any]]:
        return _module(_UTILS).execute_multi_turn_func_call(
            strings, self.entry["initial_config"], list(self.classes), self.run,
            self.entry["id"], long_context=_long_context(self.entry["id"]), is_evaL_run=False)

    def _start_turn(self, turn: int) -> None:
        self.turn, self.steps, self.current = turn, 0, []
        messages = list(self.entry["question"][turn])
        added = self.item.data["held_out"].get(str(turn))
        if added:
            self.functions.extend(copy.deepcopy(added))
            messages = [{"role": "user", "content": additional_function_prompt()}]
        if added or turn == 0:

            self.tools = tool_schemas(self.functions)
        self.messages.extend({"role": m["role"], "content": m["content"]} for m in messages)

    def _end_turn(self) -> None:
        self.turns.append(self.current)
        if self.force_quit or self.turn + 1 >= len(self.entry["question"]):
            self.done = True
        else:
            self._start_turn(self.turn + 1)

    def execute(self, calls: Sequence[dict[str, dict[str, Any]]]) -> tuple[list[str], list[str]]:
        """Run decoded calls through BFCL's helper: the call strings given to it (``""`` for a
        refused call) and the results shown to the model."""
        strings = []
        for call in calls:
            (name, arguments), = call.items()
            strings.append(call_string(name, arguments, self.methods) or "")
        results, _ = self._run(strings)
        shown = [result if text else f"Error during execution: {next(iter(call))!r} is not a "
                 "function of this task or its arguments are not plain JSON values."
                 for text, result, call in zip(strings, results, calls, strict=True)]
        return strings, shown

    def feed(self, reply: str) -> None:
        """The model's reply to the current conversation: execute its calls and answer with the
        results, or end the turn when it makes none."""

        self.messages.append({"role": "assistant", "content": reply})
        calls = decode_calls(reply)
        if not calls:
            self._end_turn()
            return
        strings, shown = self.execute(calls)
        self.current.append(strings)
        self.messages.append({"role": "user", "content": observation(shown)})
        self.steps += 1
        if self.steps > self.max_steps:
            self.force_quit = True
            self._end_turn()

    def score(self) -> float:
        """1.0 when BFCL's ``multi_turn_checker`` accepts the turns, else 0.0 (a force-terminated
        entry with turns missing fails, as in BFCL's evaluation)."""
        truth = self.item.data["answer"]
        if len(self.turns) != len(truth):
            return 0.0
        entry = {"id": self.entry["id"], "initial_config": self.entry["initial_config"],
                 "involved_classes": list(self.classes)}
        try:
            verdict = _module(_CHECKER).multi_turn_checker(
                self.turns, truth, entry, self.item.bucket, self.run)
        except Exception:  # noqa: BLE001 - BFCL's asserts on odd replies mean a failure
            return 0.0
        return 1.0 if verdict.get("valid") else 0.0


def _long_context(entry_id: str) -> bool:
    category = entry_id.rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def play_multi_turn(items: Sequence[EvalItem], backend: GenerationBackend,
                    settings: EvalSettings, max_steps: int | None = None) -> list[list[float]]:
    """Scores of ``settings.samples`` plays per multi-turn item. All episodes of a sample advance
    in lockstep, one batched ``generate`` per distinct tool set per step (seed ``seed + j`` for
    sample ``j``), so results depend only on the items, the backend and the seed."""
    limit = step_limit() if max_steps is None else max_steps
    scores: list[list[float]] = [[] for _ in items]
    for sample in range(settings.samples):
        with ExitStack() as stack:
            episodes = [Episode(item, stack.enter_context(simulator_run()), limit)
                        for item in items]
            while True:
                groups: dict[str, list[Episode]] = {}
                tools: dict[str, tuple[dict[str, Any], ...]] = {}
                for episode in episodes:
                    if not episode.done:
                        schemas = episode.tools
                        key = repr(schemas)
                        groups.setdefault(key, []).append(episode)
                        tools[key] = schemas
                if not groups:
                    break
                for key, group in groups.items():
                    generations = backend.generate(
                        [list(e.messages) for e in group], max_new_tokens=settings.max_new_tokens,
                        temperature=settings.temperature, seed=settings.seed + sample,
                        tools=list(tools[key]))
                    for episode, generation in zip(group, generations, strict=True):
                        episode.feed(generation.text)
            for index, episode in enumerate(episodes):
                scores[index].append(episode.score())
    return scores
