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
``tool`` messages. A step's results are cut to 28,000 characters together (the sandbox's
observation limit).

Containment: the simulators, BFCL's helper (which ``eval`` s each call string) and its checker
run in a sandbox worker per episode (``plugins/evals/preludes/bfcl_simulators.py``); the host
decodes replies (JSON only) and sends the calls. In the worker, a call string is built only from
a decoded call naming a public simulator method with identifier argument names and JSON values,
and the exact string BFCL will ``eval`` must parse as one call of that method with literal
keyword arguments; anything else becomes an empty string, which BFCL reports as an execution
error without evaluating anything, and the model is told the call was refused.
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from spade_core.interfaces import (
    EvalItem,
    EvalSettings,
    GenerationBackend,
    Sandbox,
    SandboxSession,
)
from spade_core.eval.sandboxed_scoring import ScorerFamily

from plugins.evals.bfcl_format import decode_calls, tool_schemas
from plugins.evals.episode_steps import advance, close_sessions, collect_scores, start_episodes

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


def gold_call(text: str, classes: tuple[str, ...],
              signatures: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """A ground-truth call string (``sort('a.pdf')``) as a tool call ``{"name", "arguments"}``,
    positional arguments named by the simulator method's signature (``signatures``: each
    class's methods and their parameter names, ``BfclData.signatures``)."""
    call = ast.parse(text, mode="eval").body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise ValueError(f"bfcl multi-turn: ground truth {text!r} is not a plain call")
    name = call.func.id
    arguments: dict[str, Any] = {}
    if call.args:
        names = next((signatures[c][name] for c in classes if name in signatures[c]), None)
        if names is None:
            raise ValueError(f"bfcl multi-turn: ground truth {text!r} names no simulator method")
        for param, node in zip(names, call.args):
            arguments[param] = ast.literal_eval(node)
    for kw in call.keywords:
        arguments[str(kw.arg)] = ast.literal_eval(kw.value)
    return {"name": name, "arguments": arguments}


def gold_replies(ground_truth: list[list[str]], classes: tuple[str, ...],
                 signatures: dict[str, dict[str, list[str]]]) -> tuple[str, ...]:
    """The replies that solve an entry, assistant turn by assistant turn: per user turn, one
    reply with all its expected calls then :data:`TURN_DONE`; :data:`NO_CALL` for a turn whose
    ground truth is no call."""
    replies: list[str] = []
    for turn in ground_truth:
        if not turn:
            replies.append(NO_CALL)
            continue
        calls = [gold_call(c, classes, signatures) for c in turn]
        replies.append("\n".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls))
        replies.append(TURN_DONE)
    return tuple(replies)


def observation(results: Sequence[str]) -> str:
    """Execution results as the tool-use family's observation text."""
    if len(results) == 1:
        return f"Tool result:\n{results[0]}"
    return "\n\n".join(f"Tool result {k + 1}:\n{out}" for k, out in enumerate(results))


# -- playing ---------------------------------------------------------------------------------

#: The program of every episode: the injected ``BfclEpisode``, unchanged.
EPISODE_PROGRAM = ('"""One BFCL multi-turn entry, played in this worker."""\n\n\n'
                   "class BfclEntryEnv(BfclEpisode):\n    pass\n")


@cache
def simulator_family(modules: tuple[str, ...]) -> ScorerFamily:
    """BFCL's simulators and checker as the trusted prelude of an episode's worker; the fork
    servers preload the helpers and ``modules`` (those of the simulator classes played, sorted;
    others, such as the memory and web-search simulators, import much more)."""
    from plugins.evals.preludes import bfcl_simulators

    source = resources.files("plugins.evals.preludes").joinpath("bfcl_simulators.py").read_text(
        encoding="utf-8")
    return ScorerFamily("bfcl-multi-turn", source, bfcl_simulators.PRELOAD + modules,
                        exported=("BfclEpisode",))


@dataclass
class Episode:
    """One entry played once: the conversation on the host, the simulators in ``session`` (a
    sandbox worker of its own), and the call strings of every step of every turn."""

    item: EvalItem
    max_steps: int
    session: SandboxSession | None = None
    functions: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, str]] = field(default_factory=list)
    turns: list[list[list[str]]] = field(default_factory=list)
    turn: int = -1
    steps: int = 0
    current: list[list[str]] = field(default_factory=list)
    done: bool = False
    force_quit: bool = False
    #: The worker failed (a limit, a crash): the entry scores 0.
    failed: bool = False

    def __post_init__(self) -> None:
        self.entry: dict[str, Any] = self.item.data["entry"]
        self.functions = copy.deepcopy(self.item.data["functions"])
        self.tools: tuple[dict[str, Any], ...] = ()
        self.messages = [m for m in self.item.prompt if m["role"] == "system"]
        self._start_turn(0)

    def start_request(self) -> str:
        """The request that creates the entry's simulator instances."""
        return json.dumps({"op": "start", "entry": {
            "id": self.entry["id"], "initial_config": self.entry["initial_config"],
            "involved_classes": list(self.entry["involved_classes"])}})

    def _start_turn(self, turn: int) -> None:
        self.turn, self.steps, self.current = turn, 0, []
        messages = list(self.entry["question"][turn])
        added = self.item.data["held_out"].get(str(turn))
        if added:
            self.functions.extend(copy.deepcopy(added))
            messages = [{"role": "user", "content": self.item.data["added_prompt"]}]
        if added or turn == 0:
            self.tools = tool_schemas(self.functions)
        self.messages.extend({"role": m["role"], "content": m["content"]} for m in messages)

    def _end_turn(self) -> None:
        self.turns.append(self.current)
        if self.force_quit or self.turn + 1 >= len(self.entry["question"]):
            self.done = True
        else:
            self._start_turn(self.turn + 1)

    def take(self, reply: str) -> str | None:
        """The model's reply to the current conversation: the request that executes its calls,
        or ``None`` when it makes none (which ends the turn)."""
        self.messages.append({"role": "assistant", "content": reply})
        calls = decode_calls(reply)
        if not calls:
            self._end_turn()
            return None
        return json.dumps({"op": "execute", "calls": calls})

    def receive(self, observation_json: str) -> None:
        """The worker's answer to an execute request: record the call strings, show the
        results."""
        answer = json.loads(observation_json)
        self.current.append(list(answer["strings"]))
        self.messages.append({"role": "user", "content": observation(answer["results"])})
        self.steps += 1
        if self.steps > self.max_steps:
            self.force_quit = True
            self._end_turn()

    def fail(self) -> None:
        self.failed = self.done = True

    def score_request(self) -> str | None:
        """The request for BFCL's verdict, or ``None`` when the entry fails without one (its
        worker failed, or a force-terminated entry has turns missing, as BFCL scores it)."""
        truth = self.item.data["answer"]
        if self.failed or len(self.turns) != len(truth):
            return None
        return json.dumps({"op": "score", "turns": self.turns, "answer": truth,
                           "category": self.item.bucket})


def _open(sandbox: Sandbox, episodes: list[Episode]) -> None:
    """A worker per episode, reset, and its simulators created."""
    modules = {m for e in episodes for m in e.item.data["modules"]}
    family = simulator_family(tuple(sorted(modules)))
    start_episodes(sandbox, episodes, EPISODE_PROGRAM, family, lambda e: e.start_request())


def play_multi_turn(items: Sequence[EvalItem], backend: GenerationBackend,
                    settings: EvalSettings, sandbox: Sandbox,
                    max_steps: int) -> list[list[float]]:
    """Scores of ``settings.samples`` plays per multi-turn item, an entry force-terminated
    after more than ``max_steps`` steps with calls in one turn. All episodes of a sample advance
    in lockstep, one batched ``generate`` per distinct tool set per step (seed ``seed + j`` for
    sample ``j``) and one batched sandbox call per step, so results depend only on the items,
    the backend and the seed."""
    scores: list[list[float]] = [[] for _ in items]
    for sample in range(settings.samples):
        episodes = [Episode(item, max_steps) for item in items]
        try:
            _open(sandbox, episodes)
            while True:
                groups: dict[str, list[Episode]] = {}
                tools: dict[str, tuple[dict[str, Any], ...]] = {}
                for episode in episodes:
                    if not episode.done:
                        key = repr(episode.tools)
                        groups.setdefault(key, []).append(episode)
                        tools[key] = episode.tools
                if not groups:
                    break
                pending: list[tuple[Episode, str]] = []
                for key, group in groups.items():
                    generations = backend.generate(
                        [list(e.messages) for e in group], max_new_tokens=settings.max_new_tokens,
                        temperature=settings.temperature, seed=settings.seed + sample,
                        tools=list(tools[key]))
                    for episode, generation in zip(group, generations, strict=True):
                        request = episode.take(generation.text)
                        if request is not None:
                            pending.append((episode, request))
                for (episode, _), answer in zip(pending, advance(sandbox, pending),
                                                strict=True):
                    if answer is not None:
                        episode.receive(answer.observation)
            scored = [(e, r) for e in episodes if (r := e.score_request()) is not None]
            collect_scores(sandbox, episodes, scored, scores)
        finally:
            close_sessions(episodes)
    return scores
