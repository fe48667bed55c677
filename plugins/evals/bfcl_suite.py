"""The ``bfcl`` eval suite: Berkeley Function Calling Leaderboard (v4) categories from the data
shipped in the ``bfcl-eval`` package, asked in the tool-use family's format
(``<tool_call>{json}</tool_call>``, schemas through ``tools=``). Single-turn categories are scored
by BFCL's own AST checker in a sandbox worker (``plugins/evals/bfcl_checker.py``), the Java and
JavaScript ones with BFCL's type converters for those languages (``bfcl_languages.py``);
irrelevance categories pass when the reply calls no tool and relevance ones when it calls any, as
BFCL scores them. Multi-turn categories (opt-in) are played turn by turn against BFCL's stateful
simulators and scored by its ``multi_turn_checker``, both in a sandbox worker per episode
(``plugins/evals/bfcl_multi_turn.py``). The data is read in a worker too: every worker of this
suite runs on its own environment (``spade suites install bfcl``), and the host never imports
``bfcl_eval``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSettings, EvalSuite, GenerationBackend, Sandbox
from spade_core.interfaces.eval_suite import first_user_text
from spade_core.eval.sandboxed_scoring import ScoringJob, request_job, score_in_sandbox

from plugins.evals.bfcl_checker import BfclData, scorer_family
from plugins.evals.bfcl_format import decode_calls, tool_schemas
from plugins.evals.bfcl_languages import LANGUAGES, literal
from plugins.evals.bfcl_multi_turn import (
    MULTI_TURN_CATEGORIES,
    entry_functions,
    gold_replies,
    play_multi_turn,
)
from plugins.evals.items import spread
from plugins.evals.options import BfclSuiteOptions
from plugins.evals.suite_envs import suite_sandbox
from plugins.families.tool_use import AGENT_INSTRUCTIONS

VERSION_PREFIX = "BFCL_v4_"
#: Our category name -> BFCL's data file stem (Python categories: the AST checker's language).
CATEGORIES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
    "live_simple": "live_simple",
    "live_multiple": "live_multiple",
    "live_parallel": "live_parallel",
    "live_parallel_multiple": "live_parallel_multiple",
    "live_irrelevance": "live_irrelevance",
    "live_relevance": "live_relevance",
    "java": "simple_java",
    "javascript": "simple_javascript",
}
#: Single-turn and multi-turn categories together (the names the ``categories`` option takes).
ALL_CATEGORIES: dict[str, str] = {**CATEGORIES, **MULTI_TURN_CATEGORIES}
#: The default: BFCL's non-live Python categories (live, Java, JavaScript and multi-turn ones are
#: opt-in; multi-turn items take several generation calls per user turn).
DEFAULT_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
#: The live categories bfcl_eval's overall weighs by their entry counts.
LIVE_WEIGHTED = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
REFUSAL = "None of the available tools can do this, so I will not call one."


def gold_reply(ground_truth: list[dict[str, Any]] | None,
               functions: list[dict[str, Any]] | None = None, language: str = "python") -> str:
    """A reply that BFCL accepts: each expected call with the first possible value of each
    parameter (optional parameters whose first possibility is "omit" are left out); for Java and
    JavaScript each value written as the literal BFCL's converter reads back. Without a ground
    truth, a refusal (irrelevance)."""
    if not ground_truth:
        return REFUSAL
    blocks = []
    for call in ground_truth:
        (name, params), = call.items()
        arguments = _chosen(params)
        if language != "python":
            schemas = _properties(functions or [], name)
            arguments = {k: literal(params[k][0] if isinstance(params[k], list) else params[k],
                                 schemas.get(k, {}), language)
                         for k in arguments}
        blocks.append("<tool_call>" + json.dumps({"name": name, "arguments": arguments})
                      + "</tool_call>")
    return "\n".join(blocks)


def _properties(functions: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for function in functions:
        if function.get("name") == name:
            return function.get("parameters", {}).get("properties", {})
    return {}


def relevance_reply(functions: list[dict[str, Any]]) -> str:
    """A reply that BFCL's relevance categories accept: any decodable call (here the first
    function, without arguments)."""
    return "<tool_call>" + json.dumps({"name": functions[0]["name"], "arguments": {}}) + \
        "</tool_call>"


def _chosen(possibilities: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """The first possibility of each parameter; dictionary values one level down list their
    possibilities too (BFCL's checker compares them that way), deeper ones are plain values."""
    chosen = {}
    for key, values in possibilities.items():
        if not isinstance(values, list):
            chosen[key] = values
        elif values and values[0] != "":
            chosen[key] = _value(values[0], depth)
    return chosen


def _value(value: Any, depth: int) -> Any:
    if depth > 0:
        return value
    if isinstance(value, dict):
        return _chosen(value, depth + 1)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_chosen(v, depth + 1) for v in value]
    return value


def is_relevance(category: str) -> bool:
    """Whether ``category`` passes an item when the reply makes any call (``live_relevance``)."""
    return "relevance" in category and "irrelevance" not in category


def is_multi_turn(item: EvalItem) -> bool:
    """Whether ``item`` belongs to a multi-turn category (played by :meth:`BfclSuite.play`)."""
    return item.bucket in MULTI_TURN_CATEGORIES


class BfclSuite(EvalSuite):
    """BFCL categories; each category is a bucket."""

    name = "bfcl"

    def __init__(self, categories: list[str] | None = None, max_steps: int | None = None,
                 sandbox: Sandbox | None = None) -> None:
        chosen = list(categories or DEFAULT_CATEGORIES)
        unknown = [c for c in chosen if c not in ALL_CATEGORIES]
        if unknown:
            raise ConfigError(f"bfcl suite: unknown categor{'y' if len(unknown) == 1 else 'ies'} "
                              f"{', '.join(unknown)}; categories are {', '.join(ALL_CATEGORIES)}")
        if max_steps is not None and max_steps < 1:
            raise ConfigError(f"bfcl suite: max_steps must be at least 1, not {max_steps}")
        self.categories = chosen
        #: Where BFCL's data is read and its checker and simulators run: workers on the bfcl
        #: environment (``None`` only for a suite built without a sandbox, which cannot run).
        self.sandbox = sandbox
        #: Steps with calls per user turn before a multi-turn entry is force-terminated
        #: (``None``: BFCL's ``MAXIMUM_STEP_LIMIT``).
        self.max_steps = max_steps

    def _data(self) -> BfclData:
        return BfclData(self._sandbox())

    def _read(self, relative: str) -> list[dict[str, Any]]:
        return self._data().read(relative)

    def _multi_turn_category(self, category: str) -> list[EvalItem]:
        stem = VERSION_PREFIX + MULTI_TURN_CATEGORIES[category] + ".json"
        answers = {a["id"]: a["ground_truth"] for a in self._read("possible_answer/" + stem)}
        constants = self._data().constants()
        files, modules = constants["func_doc_files"], constants["class_modules"]
        entries = self._read(stem)
        for entry in entries:
            unknown = [c for c in entry["involved_classes"] if c not in files]
            if unknown:
                raise ConfigError(f"bfcl suite: {entry['id']} needs the simulator "
                                  f"{', '.join(unknown)}, which has no function documents")
        signatures = self._data().signatures(
            sorted({c for entry in entries for c in entry["involved_classes"]}))
        items = []
        for entry in entries:
            classes = tuple(entry["involved_classes"])
            docs = {c: self._read("multi_turn_func_doc/" + files[c]) for c in classes}
            functions, held_out = entry_functions(entry, docs)
            truth = answers[entry["id"]]
            first = [m for m in entry["question"][0] if m.get("role") in ("system", "user")]
            questions = [m["content"] for turn in entry["question"] for m in turn
                         if m.get("role") == "user"]
            items.append(EvalItem(
                id=entry["id"], bucket=category,
                prompt=({"role": "system", "content": AGENT_INSTRUCTIONS}, *first),
                tools=tool_schemas(functions),
                gold=gold_replies(truth, classes, signatures),
                text="\n".join(questions),
                data={"entry": entry, "functions": functions, "held_out": held_out,
                      "answer": truth, "added_prompt": constants["additional_prompt"],
                      "modules": sorted({modules[c] for c in classes})}))
        return items

    def _category(self, category: str) -> list[EvalItem]:
        if category in MULTI_TURN_CATEGORIES:
            return self._multi_turn_category(category)
        stem = VERSION_PREFIX + CATEGORIES[category] + ".json"
        answers = {} if "relevance" in category else {  # irrelevance too
            a["id"]: a["ground_truth"] for a in self._read("possible_answer/" + stem)}
        language = LANGUAGES.get(category, "python")
        entries = self._read(stem)
        shown_all = ([e["function"] for e in entries] if language == "python"
                     else self._data().shown(entries))
        items = []
        for entry, shown in zip(entries, shown_all, strict=True):
            turns = entry["question"]
            messages = [m for m in turns[0] if m.get("role") in ("system", "user")]
            truth = answers.get(entry["id"])
            question = "\n".join(m["content"] for m in messages if m["role"] == "user")
            gold = (relevance_reply(entry["function"]) if is_relevance(category)
                    else gold_reply(truth, entry["function"], language))
            items.append(EvalItem(
                id=entry["id"], bucket=category,
                prompt=({"role": "system", "content": AGENT_INSTRUCTIONS}, *messages),
                tools=tool_schemas(shown), gold=(gold,), text=question,
                data={"functions": entry["function"], "answer": truth}))
        return items

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        """The categories' items in BFCL's own order (the data is fixed; ``seed`` is unused).
        The entry counts of the live categories go to :attr:`notes`: bfcl_eval weighs them by
        count in its overall accuracy, a category not run with its whole count."""
        self.notes = {"category_sizes": {
            c: len(self._read(VERSION_PREFIX + CATEGORIES[c] + ".json")) for c in LIVE_WEIGHTED}}
        return spread({c: self._category(c) for c in self.categories}, limit)

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        """Single-turn items by the default path (one reply each, :meth:`score`); multi-turn
        items interactively, turn by turn against BFCL's simulators
        (:func:`plugins.evals.bfcl_multi_turn.play_multi_turn`)."""
        scores: list[list[float]] = [[] for _ in items]
        single = [i for i, item in enumerate(items) if not is_multi_turn(item)]
        multi = [i for i, item in enumerate(items) if is_multi_turn(item)]
        if single:
            played = super().play([items[i] for i in single], backend, settings)
            for i, item_scores in zip(single, played, strict=True):
                scores[i] = item_scores
        if multi:
            limit = self.max_steps or int(self._data().constants()["step_limit"])
            played = play_multi_turn([items[i] for i in multi], backend, settings,
                                     self._sandbox(), limit)
            for i, item_scores in zip(multi, played, strict=True):
                scores[i] = item_scores
        return scores

    def gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """The default table (keyed by the first user message), turn by turn for multi-turn
        items. Some multi-turn entries begin with the same conversation but need different
        replies (``multi_turn_base_40`` and ``_43``; an entry and its ``miss_param`` or
        ``miss_func`` variant): no fake reading the conversation can answer both, so such a pair
        is a ``ValueError`` naming them rather than a silently wrong table."""
        table: dict[str, tuple[str, ...]] = {}
        owner: dict[str, EvalItem] = {}
        for item in items:
            key = first_user_text(item.prompt)
            if (key in table and table[key] != item.gold
                    and (is_multi_turn(item) or is_multi_turn(owner[key]))):
                raise ValueError(f"bfcl gold: {owner[key].id} and {item.id} begin with the same "
                                 "conversation but need different replies; take them in "
                                 "separate runs")
            table[key], owner[key] = item.gold, item
        return table

    def score_many(self, pairs: Sequence[tuple[EvalItem, str]]) -> list[float]:
        """Single-turn replies: the ``<tool_call>`` blocks are decoded here (JSON only); an
        irrelevance item passes when there is none, a relevance item when there is one; every
        other item's calls go to BFCL's checker in the sandbox (with the item's language)."""
        scores: list[float | None] = []
        jobs: list[ScoringJob] = []
        for item, reply in pairs:
            if is_multi_turn(item):
                raise NotImplementedError("bfcl multi-turn items are scored by play()")
            calls = decode_calls(reply)
            if is_relevance(item.bucket):
                scores.append(1.0 if calls else 0.0)
                continue
            if "irrelevance" in item.bucket or not calls:
                scores.append(0.0 if calls or "irrelevance" not in item.bucket else 1.0)
                continue
            scores.append(None)
            jobs.append(request_job(scorer_family(), {
                "functions": item.data["functions"], "calls": calls,
                "answer": item.data["answer"], "category": CATEGORIES[item.bucket],
                "language": LANGUAGES.get(item.bucket, "python")}))
        checked = iter(score_in_sandbox(self._sandbox(), jobs) if jobs else [])
        return [next(checked) if score is None else score for score in scores]

    def score(self, item: EvalItem, reply: str) -> float:
        return self.score_many([(item, reply)])[0]

    def _sandbox(self) -> Sandbox:
        if self.sandbox is None:
            raise ConfigError("the bfcl suite reads BFCL's data and runs its checker and "
                              "simulators in a sandbox; none was given to it when it was built")
        return self.sandbox


def build(options: BfclSuiteOptions, context: Any) -> BfclSuite:
    """The suite on a sandbox whose workers run on the bfcl environment (a ``ConfigError``
    naming ``spade suites install bfcl`` when it is missing)."""
    return BfclSuite(list(options.categories), options.max_steps,
                     suite_sandbox(context.components.get("sandbox"), "bfcl"))
