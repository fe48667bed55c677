"""The ``acebench`` eval suite: ACEBench (Chen et al. 2025, arXiv 2501.12851), the English
test set (``data_en``) read from the user's local copy of the benchmark's repository
(``eval.data.acebench``; github.com/ACEBench/ACEBench, ``data_all/data_en``). Three buckets, as
the authors group their 17 categories:

- ``normal``: the reply is a list of calls, ``[Api(key='value', ...), ...]``, decoded with
  ``ast.parse`` (a syntax tree only: nothing is executed; literal values are read off the tree)
  and checked against the possible answer by ACEBench's rules
  (:mod:`plugins.evals.acebench_checker`).
  The two multi-turn categories are scored per dialogue: a dialogue passes when every one of its
  steps does (ACEBench's end accuracy).
- ``special``: incomplete, error-parameter and irrelevant requests; the reply must say what is
  wrong in ACEBench's wording, naming the missing parameters and the API, or the incorrect
  values (substring checks, as ACEBench's ``special_eval``).
- ``agent``: multi-step and multi-turn tasks (the latter with a simulated user: a generation
  backend, by default the one under evaluation). ACEBench scores them by the end state of its
  simulated phone and travel APIs (the scenario classes of its repository) and reports process
  accuracy, the share of the expected call milestones the agent made in order, beside it.

  When the clone ``eval.data.acebench`` names has the scenario code
  (``model_inference/{multi_step,multi_turn}/scenariosen``), each episode runs the task's
  classes in a sandbox worker of its own (:mod:`plugins.evals.preludes.acebench_episode`): the
  host reads the files as text and sends them, and each reply's calls decoded with ``ast`` as
  JSON; the agent sees the APIs' real results, and the end state that comes back is checked
  against the item's ground truth by ACEBench's agent checker
  (:func:`~plugins.evals.acebench_checker.end_state_verdict`). The item scores 1 or 0;
  process accuracy is kept in ``notes``. Without the code, calls get an observation saying the
  API is not simulated and an item's score is its process accuracy (it passes when every
  milestone was made in order); ``skipped`` says so. docs/eval.md says how each compares with
  the paper.

Everything here is string and syntax-tree work on the host: no reply is evaluated, and
ACEBench's scenario code runs only in sandbox workers.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import (
    EvalItem,
    EvalSettings,
    EvalSuite,
    GenerationBackend,
    Sandbox,
    SandboxSession,
)
from spade_core.eval.sandboxed_scoring import ScorerFamily

from plugins.evals.acebench_checker import (
    call_text,
    decode_calls,
    end_state_verdict,
    normal_verdict,
    process_accuracy,
    special_verdict,
)
from plugins.evals.episode_steps import advance, ask, close_sessions, start_episodes
from plugins.evals.items import spread
from plugins.evals.options import ACEBENCH_CATEGORIES, AcebenchSuiteOptions
from plugins.evals.user_backend import UserBackendHolder, UserFactory, user_factory

WHERE = ("github.com/ACEBench/ACEBench (git clone; the files are in data_all/data_en/, the "
         "possible answers in data_all/data_en/possible_answer/)")
BUCKETS = ("normal", "special", "agent")
#: Bucket -> its categories, in ACEBench's order (``category.py``).
CATEGORIES: dict[str, tuple[str, ...]] = {
    bucket: tuple(c for c in ACEBENCH_CATEGORIES if c.startswith(bucket)) for bucket in BUCKETS}
MULTI_TURN = ("normal_multi_turn_user_adjust", "normal_multi_turn_user_switch")
FINISH = "finish conversation"
NOT_SIMULATED = ("execution: the call was recorded; this evaluation does not simulate the API, "
                 "so there is no result. Continue with the next step.")
#: Agent replies (calls or messages) before an episode ends (ACEBench: 40 dialogue turns).
DEFAULT_AGENT_TURNS = 40

LOG = logging.getLogger(__name__)
#: Where ACEBench keeps its English scenario code (the agent categories' simulated APIs), under
#: the repository root; the two folders hold the same classes (multi-step modules import
#: multi-turn's ``base_api``).
SCENARIO_FOLDERS = ("model_inference/multi_step/scenariosen",
                    "model_inference/multi_turn/scenariosen")
#: Scenario class -> its module under a scenario folder (ACEBench's
#: ``CLASS_FILE_PATH_MAPPING_EN``).
SCENARIO_CLASSES = {"BaseApi": "phone_platform.base_api", "MessageApi": "phone_platform.message",
                    "ReminderApi": "phone_platform.reminder",
                    "FoodPlatform": "phone_platform.food_services", "Travel": "travel"}
#: The attributes of each class that make its end state (ACEBench's ``SAVED_CLASS``).
SAVED_ATTRIBUTES = {"BaseApi": ["wifi", "logged_in"], "MessageApi": ["inbox"],
                    "ReminderApi": ["reminder_list"],
                    "FoodPlatform": ["users", "logged_in_users", "orders"],
                    "Travel": ["users", "reservations"]}
#: The program of every agent episode: the injected ``AcebenchEpisode``, unchanged.
EPISODE_PROGRAM = ('"""One ACEBench agent task, played in this worker."""\n\n\n'
                   "class AcebenchTaskEnv(AcebenchEpisode):\n    pass\n")
#: Most characters of scenario source shipped to a worker (ACEBench's come to about 100,000).
MAX_SCENARIO_CHARS = 2_000_000
NO_SCENARIOS = ("ACEBench's scenario code (model_inference/multi_step/scenariosen or "
                "model_inference/multi_turn/scenariosen of a clone of the repository) was not "
                "found next to eval.data.acebench, so the agent tasks' APIs are not simulated "
                "and the agent bucket is scored by process accuracy, not by end state as in "
                "the paper")

_CALL_FORMAT = (
    "Write the API requests in the form [ApiName(key1='value1', key2='value2', ...)], several "
    "separated by commas inside the one pair of square brackets, and nothing else. A parameter "
    "not described as required is optional: include the parameters the user mentions. When the "
    "description gives no format for a value, use the user's own words. An API without "
    "parameters is written [ApiName()].")
NORMAL_PROMPT = ("You are the assistant. From the API specifications and the conversation so "
                 "far, give the API requests the assistant makes next. " + _CALL_FORMAT
                 + "\n\n{time}\n\nAPI specifications:\n{functions}")
PREFERENCE_PROMPT = ("You are the assistant. From the API specifications, the user's profile "
                     "and the conversation so far, give the API requests the assistant makes "
                     "next; values may come from the profile. " + _CALL_FORMAT
                     + "\n\nUser profile:\n{profile}\n\nAPI specifications:\n{functions}")
SPECIAL_PROMPT = (
    "You are the assistant. From the API specifications and the conversation so far, give the "
    "API requests the assistant makes next. " + _CALL_FORMAT + "\n"
    "When the request cannot be served as it stands, say so instead, in exactly one of these "
    "forms, checked in this order:\n"
    "1. a value has the wrong type or form: [\"There is incorrect value (value) for the "
    "parameters (key) in the conversation history.\"]\n"
    "2. a required detail is missing: [\"Missing necessary parameters (key1, key2, ...) for "
    "the api (ApiName)\"]\n"
    "3. no API can do it: [\"Due to the limitations of the function, I cannot solve this "
    "problem.\"]\n\n{time}\n\nAPI specifications:\n{functions}")
USER_TURN = "Conversation history 1..t:\n{question}"
#: The domain notes of ACEBench's agent prompts, in short: the current time each scenario
#: assumes and the calling rules.
AGENT_PROMPT = (
    "You are an agent working for the user with the APIs below. {when} Call one API per "
    "message (several calls of the same API may go in one list), never reply to the user and "
    "call an API in the same message, and ask the user when information is missing. " + _CALL_FORMAT
    + " When the task is done, answer \"" + FINISH + "\".\n\nAPI specifications:\n{functions}")
TRAVEL_TIME = ("The current time is July 15, 2024, 08:00 (Beijing Time); you act as an airline "
               "agent.")
PHONE_TIME = ("The current time is June 11, 2024, 16:00 (Beijing Time); you act as a mobile "
              "assistant that sends messages, adds reminders and orders takeout.")
USER_PROMPT = (
    "You play a user talking to an assistant agent. Your task and persona:\n<scenario>\n"
    "{question}\n</scenario>\nSay what you want one step at a time, answer the agent's "
    "questions, give no information it did not ask for, and when the task is done write \""
    + FINISH + "\".")


def data_folder(location: str | None) -> Path:
    """The folder holding ACEBench's English data files: ``location`` itself, or its
    ``data_all/data_en`` or ``data_en`` (a clone of the repository works)."""
    if not location:
        raise ConfigError(
            "the acebench eval suite needs ACEBench's data files, which ship on no package "
            "index: set eval.data.acebench (or --option acebench.data=...) to the folder "
            f"holding data_normal_*.json, data_special_*.json, data_agent_*.json and "
            f"possible_answer/. Get them from {WHERE}. Nothing is downloaded at run time.")
    root = Path(location).expanduser()
    if not root.is_dir():
        raise ConfigError(f"eval.data.acebench: {root}: no such folder. The acebench suite "
                          f"reads ACEBench's data_en files from there; get them from {WHERE}.")
    for folder in (root, root / "data_all" / "data_en", root / "data_en"):
        if any(folder.glob("data_*.json")):
            return folder
    return root


def scenario_sources(location: str | None, data: Path) -> dict[str, str] | None:
    """ACEBench's English scenario modules as ``{dotted module name: source text}``, read from
    the clone ``eval.data.acebench`` points at (the folder itself, or two levels above the data
    folder), or ``None`` when it has none. Files are read as text only: they run in sandbox
    workers (:mod:`plugins.evals.preludes.acebench_episode`)."""
    roots = dict.fromkeys(p for p in (Path(location or ".").expanduser(), data.parent,
                                      data.parent.parent))
    for root in roots:
        folders = [root / f for f in SCENARIO_FOLDERS if (root / f).is_dir()]
        if not folders:
            continue
        sources: dict[str, str] = {}
        for folder in folders:
            for path in sorted(folder.rglob("*.py")):
                name = ".".join(path.relative_to(root).with_suffix("").parts)
                sources[name] = path.read_text(encoding="utf-8")
        if sum(len(text) for text in sources.values()) > MAX_SCENARIO_CHARS:
            raise ConfigError(f"eval.data.acebench: the scenario code under {root} is over "
                              f"{MAX_SCENARIO_CHARS} characters; is it ACEBench's?")
        return sources
    return None


def scenario_package(sources: dict[str, str], category: str) -> str:
    """The package whose classes an agent category's tasks use: ACEBench's own
    (``multi_step`` or ``multi_turn``), or the other when only that one is there."""
    mine, other = (SCENARIO_FOLDERS if category == "agent_multi_step"
                   else SCENARIO_FOLDERS[::-1])
    for folder in (mine, other):
        package = folder.replace("/", ".")
        if any(name.startswith(package + ".") for name in sources):
            return package
    raise ConfigError("eval.data.acebench: no scenario modules")


@cache
def episode_family() -> ScorerFamily:
    """The scenario runner as the trusted prelude of an agent episode's worker."""
    source = resources.files("plugins.evals.preludes").joinpath(
        "acebench_episode.py").read_text(encoding="utf-8")
    return ScorerFamily("acebench", source, exported=("AcebenchEpisode",))


def read_lines(path: Path, category: str) -> list[dict[str, Any]]:
    """The entries of one ACEBench file (one JSON object per line, despite the ``.json``)."""
    if not path.is_file():
        raise ConfigError(f"eval.data.acebench: {path} is missing (category {category}). Get "
                          f"ACEBench's files from {WHERE}, or leave the category out with "
                          "--option acebench.categories=[...].")
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"eval.data.acebench: {path}, line {number}: not JSON ({exc})"
                              ) from None
        if not isinstance(entry, dict) or "id" not in entry:
            raise ConfigError(f"eval.data.acebench: {path}, line {number}: expected an object "
                              "with an 'id'")
        entries.append(entry)
    return entries


def gold_calls(truth: dict[str, Any]) -> str:
    """The reply ACEBench accepts for a normal entry: each expected call with its values written
    as Python literals (``name_2`` keys are a second call of ``name``)."""
    return "[" + ", ".join(call_text(re.sub(r"_\d+$", "", name), params)
                           for name, params in truth.items()) + "]"


def special_gold(category: str, truth: Any) -> str:
    """The reply ACEBench accepts for a special entry, in its wording."""
    if "irrelevant" in category:
        return '["Due to the limitations of the function, I cannot solve this problem."]'
    (name, values), *_ = truth.items()
    if "incomplete" in category:
        return f'["Missing necessary parameters ({", ".join(values)}) for the api ({name})"]'
    parts = ", ".join(str(v) for vs in truth.values() for v in vs)
    keys = ", ".join(truth)
    return (f'["There is incorrect value ({parts}) for the parameters ({keys}) in the '
            'conversation history."]')


def _functions_text(functions: Any) -> str:
    return json.dumps(functions, ensure_ascii=False)


def _step_prompt(category: str, entry: dict[str, Any]) -> tuple[dict[str, str], ...]:
    functions = _functions_text(entry.get("function", []))
    if category.startswith("special"):
        system = SPECIAL_PROMPT.format(time=entry.get("time", ""), functions=functions)
    elif category == "normal_preference":
        system = PREFERENCE_PROMPT.format(profile=entry.get("profile", ""), functions=functions)
    else:
        system = NORMAL_PROMPT.format(time=entry.get("time", ""), functions=functions)
    return ({"role": "system", "content": system},
            {"role": "user", "content": USER_TURN.format(question=entry["question"])})


@dataclass(frozen=True)
class Step:
    """One prompt of a normal or special item and what its reply is checked against."""

    prompt: tuple[dict[str, str], ...]
    functions: Any
    answer: Any
    question: str


class AcebenchSuite(EvalSuite):
    """ACEBench's normal, special and agent buckets (items: entries; normal multi-turn
    categories: dialogues; agent: tasks)."""

    name = "acebench"
    scores_in_process = True

    def __init__(self, location: str | None, categories: Sequence[str] | None = None,
                 agent_turns: int = DEFAULT_AGENT_TURNS,
                 user: GenerationBackend | None = None, sandbox: Sandbox | None = None,
                 user_factory: UserFactory | None = None) -> None:
        chosen = list(categories or ACEBENCH_CATEGORIES)
        unknown = [c for c in chosen if c not in ACEBENCH_CATEGORIES]
        if unknown:
            plural = "y" if len(unknown) == 1 else "ies"
            raise ConfigError(f"acebench suite: unknown categor{plural} {', '.join(unknown)}; "
                              "categories are "
                              f"{', '.join(ACEBENCH_CATEGORIES)}")
        folder = data_folder(location)
        self.agent_turns = agent_turns
        #: The simulated user's backend (``None``: built by ``user_factory`` at the first play,
        #: else the backend under evaluation plays it too).
        self.user = user
        self._users = UserBackendHolder(user_factory)
        #: Where agent episodes run ACEBench's scenario classes.
        self.sandbox = sandbox
        #: ACEBench's scenario modules (``None``: absent; agent tasks scored by process).
        self.scenarios = scenario_sources(location, folder) if any(
            c.startswith("agent") for c in chosen) else None
        #: Parts left out, with the reason (``SuiteResult.skipped``), and secondary figures of
        #: the last play (``SuiteResult.notes``).
        self.skipped: dict[str, str] = {}
        self.notes: dict[str, Any] = {}
        self.buckets: dict[str, list[EvalItem]] = {}
        for category in (c for c in ACEBENCH_CATEGORIES if c in chosen):
            entries = read_lines(folder / f"data_{category}.json", category)
            answers = {a["id"]: a for a in read_lines(
                folder / "possible_answer" / f"data_{category}.json", category)}
            missing = [e["id"] for e in entries if e["id"] not in answers]
            if missing:
                raise ConfigError(f"eval.data.acebench: {folder / 'possible_answer'}"
                                  f"/data_{category}.json has no answer for {missing[0]}")
            bucket = category.split("_", 1)[0]
            self.buckets.setdefault(bucket, []).extend(
                self._items(category, entries, answers))

    def _items(self, category: str, entries: list[dict[str, Any]],
               answers: dict[str, dict[str, Any]]) -> list[EvalItem]:
        if category.startswith("agent"):
            return [self._agent_item(category, e, answers[e["id"]]) for e in entries]
        groups: dict[str, list[dict[str, Any]]] = {}
        for entry in entries:  # a multi-turn dialogue's steps are <category>_<dialogue>_<step>
            key = entry["id"].rsplit("_", 1)[0] if category in MULTI_TURN else entry["id"]
            groups.setdefault(key, []).append(entry)
        items = []
        for ident, group in groups.items():
            steps = tuple(Step(_step_prompt(category, e), e.get("function", []),
                               answers[e["id"]]["ground_truth"], e["question"]) for e in group)
            golds = tuple(special_gold(category, s.answer) if category.startswith("special")
                          else gold_calls(_first(s.answer)) for s in steps)
            items.append(EvalItem(
                id=ident, bucket=category.split("_", 1)[0], prompt=steps[0].prompt,
                gold=golds, text=group[-1]["question"],
                data={"category": category, "steps": steps}))
        return items

    def _agent_item(self, category: str, entry: dict[str, Any],
                    answer: dict[str, Any]) -> EvalItem:
        classes = entry.get("involved_classes") or list(entry.get("initial_config", {}))
        when = TRAVEL_TIME if "Travel" in classes else PHONE_TIME
        system = AGENT_PROMPT.format(when=when, functions=_functions_text(entry["function"]))
        milestones = answer.get("mile_stone") or []
        first = milestones[0] if milestones and isinstance(milestones[0], list) else milestones
        return EvalItem(
            id=entry["id"], bucket="agent",
            prompt=({"role": "system", "content": system},
                    {"role": "user", "content": entry["question"]}),
            gold=(*first, FINISH), text=entry["question"],
            data={"category": category, "system": system, "milestones": milestones,
                  "user_prompt": USER_PROMPT.format(question=entry["question"]),
                  "ground_truth": answer.get("ground_truth"), "involved": classes,
                  "config": entry.get("initial_config") or {}})

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        """The buckets' items in ACEBench's order (the data is fixed; ``seed`` is unused)."""
        return spread(self.buckets, limit)

    def gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """Each step's gold reply keyed by its user message; an agent task's replies keyed by
        the task (its opening user message: the task itself, or what a scripted user opens
        with)."""
        table: dict[str, tuple[str, ...]] = {}
        for item in items:
            if item.bucket == "agent":
                table[item.text] = item.gold
                continue
            for step, reply in zip(item.data["steps"], item.gold, strict=True):
                table[step.prompt[1]["content"]] = (reply,)
        return table

    def score_step(self, category: str, step: Step, reply: str) -> float:
        """One reply by ACEBench's rules for its category."""
        if category.startswith("special"):
            return 1.0 if special_verdict(category, step.answer, reply) else 0.0
        return 1.0 if normal_verdict(category, step.functions, step.answer, step.question,
                                     reply) else 0.0

    def score(self, item: EvalItem, reply: str) -> float:
        steps = item.data.get("steps", ())
        if len(steps) != 1:
            raise NotImplementedError("acebench dialogues and agent tasks are scored by play()")
        return self.score_step(item.data["category"], steps[0], reply)

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        """Normal and special items: every step of every item asked in one batched call per
        sample (seed ``seed + j``), an item passing when all its steps do. Agent tasks: played
        as episodes (:func:`play_agent`)."""
        scores: list[list[float]] = [[] for _ in items]
        processes: list[float] = []
        single = [i for i, item in enumerate(items) if item.bucket != "agent"]
        agents = [i for i, item in enumerate(items) if item.bucket == "agent"]
        prompts = [(i, step) for i in single for step in items[i].data["steps"]]
        for sample in range(settings.samples):
            if prompts:
                replies = backend.generate([list(step.prompt) for _, step in prompts],
                                           max_new_tokens=settings.max_new_tokens,
                                           temperature=settings.temperature,
                                           seed=settings.seed + sample)
                verdicts: dict[int, list[float]] = {}
                for (i, step), reply in zip(prompts, replies, strict=True):
                    verdicts.setdefault(i, []).append(
                        self.score_step(items[i].data["category"], step, reply.text))
                for i in single:
                    scores[i].append(min(verdicts[i]))
            if agents:
                played = play_agent([items[i] for i in agents], backend,
                                    self.user or self._users.backend(backend),
                                    settings, settings.seed + sample, self.agent_turns,
                                    self._runner())
                for i, (value, process) in zip(agents, played, strict=True):
                    scores[i].append(value)
                    processes.append(process)
        self._agent_notes(processes, [scores[i] for i in agents])
        return scores

    def close(self) -> None:
        """End the simulated user's backend if this suite built it."""
        self._users.close()

    def _runner(self) -> ScenarioRunner | None:
        if self.scenarios is None:
            return None
        if self.sandbox is None:
            raise ConfigError("the acebench suite runs ACEBench's scenario classes in a "
                              "sandbox; none was given to it when it was built")
        return ScenarioRunner(self.sandbox, self.scenarios)

    def _agent_notes(self, processes: list[float], agent_scores: list[list[float]]) -> None:
        """What the output says about the agent bucket's scoring (``skipped`` and ``notes``)."""
        self.skipped, self.notes = {}, {}
        if not agent_scores:
            return
        if self.scenarios is None:
            self.skipped["agent end state"] = NO_SCENARIOS
            self.notes["agent_scoring"] = "process accuracy (scenario code absent)"
            LOG.warning("acebench: %s", NO_SCENARIOS)
            return
        mean = round(sum(processes) / len(processes), 4) if processes else 0.0
        self.notes["agent_scoring"] = "end state (ACEBench's scenario classes, in the sandbox)"
        self.notes["agent_process_accuracy"] = mean
        LOG.info("acebench: agent end-state accuracy %.4f, process accuracy %.4f",
                 sum(sum(s) / len(s) for s in agent_scores) / len(agent_scores), mean)


def _first(answer: Any) -> Any:
    """The first of several possible answers (a list of them), or the one answer."""
    return answer[0] if isinstance(answer, list) and answer else answer


@dataclass
class Episode:
    """One agent task played once: the agent's conversation, the user's, the calls made and
    (with the scenario code) the worker running the task's APIs."""

    item: EvalItem
    agent: list[dict[str, str]] = field(default_factory=list)
    user: list[dict[str, str]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    turn: str = "agent"
    turns: int = 0
    done: bool = False
    session: SandboxSession | None = None
    failed: bool = False

    def agent_said(self, text: str, limit: int) -> list[dict[str, Any]] | None:
        """Route the agent's reply: calls are recorded (and returned, for the APIs to run), a
        message goes to the user (multi-turn) or ends the task (multi-step); the finish phrase
        ends it."""
        self.agent.append({"role": "assistant", "content": text})
        self.turns += 1
        calls = None
        squeezed = decode_calls(text)
        if squeezed is not None:
            self.calls.append(text.strip())
            # ACEBench runs the calls as written (whitespace in values kept).
            decoded = decode_calls(text, squeeze=False) or squeezed
            calls = [{"name": name, "arguments": _jsonable(arguments)}
                     for call in decoded for name, arguments in call.items()]
        elif FINISH in text or self.item.data["category"] != "agent_multi_turn":
            self.done = True
        else:
            self.user.append({"role": "user", "content": text})
            self.turn = "user"
        if self.turns >= limit:
            self.done = True
        return calls

    def executed(self, results: str | None) -> None:
        """Show the agent what its calls returned (``None``: the APIs are not simulated)."""
        self.agent.append({"role": "user", "content": NOT_SIMULATED if results is None
                           else "execution result: " + results})

    def user_said(self, text: str) -> None:
        self.user.append({"role": "assistant", "content": text})
        self.agent.append({"role": "user", "content": text})
        self.turn = "agent"
        if FINISH in text or "###STOP###" in text:
            self.done = True

    def fail(self) -> None:
        """The episode's worker failed (a scenario method hung or hit a limit): it ends, 0."""
        self.failed = self.done = True


def _jsonable(value: Any) -> Any:
    """A decoded call value as JSON data (tuples as lists, keys as text)."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class ScenarioRunner:
    """ACEBench's scenario classes for a batch of episodes: one sandbox worker per episode
    (:mod:`plugins.evals.preludes.acebench_episode`), requests as JSON, batched per step."""

    def __init__(self, sandbox: Sandbox, sources: dict[str, str]) -> None:
        self.sandbox, self.sources = sandbox, sources

    def start(self, episodes: list[Episode]) -> None:
        start_episodes(self.sandbox, episodes, EPISODE_PROGRAM, episode_family(),
                       lambda e: self._start_request(e.item))

    def _start_request(self, item: EvalItem) -> str:
        package = scenario_package(self.sources, item.data["category"])
        return json.dumps({
            "op": "start", "modules": self.sources,
            "classes": {name: f"{package}.{module}" for name, module in SCENARIO_CLASSES.items()},
            "involved": list(item.data["involved"]), "config": item.data["config"]})

    def run(self, pending: list[tuple[Episode, list[dict[str, Any]]]]) -> None:
        """Run each episode's calls and show it the results."""
        requests = [(e, json.dumps({"op": "call", "calls": calls})) for e, calls in pending]
        for (episode, _), answer in zip(requests, advance(self.sandbox, requests), strict=True):
            if answer is not None:
                episode.executed(answer.observation)

    def verdicts(self, episodes: list[Episode]) -> list[float]:
        """Each episode's end state checked against its ground truth (1 or 0)."""
        request = json.dumps({"op": "state", "saved": SAVED_ATTRIBUTES})
        scores = []
        for episode, answer in zip(episodes, ask(self.sandbox, episodes, lambda e: request),
                                   strict=True):
            try:
                state = json.loads(answer.observation) if answer is not None else None
            except json.JSONDecodeError:
                state = None
            scores.append(1.0 if state is not None and end_state_verdict(
                episode.item.data["ground_truth"], state) else 0.0)
        return scores


def play_agent(items: Sequence[EvalItem], agent: GenerationBackend, user: GenerationBackend,
               settings: EvalSettings, seed: int, turns: int,
               runner: ScenarioRunner | None = None) -> list[tuple[float, float]]:
    """Each task's score and process accuracy (ACEBench's milestone rule) after one episode:
    with a ``runner`` the score is the end state's verdict and calls get the APIs' results,
    without one it is the process accuracy. Multi-step tasks open with the task as the user
    message; multi-turn ones with the simulated user's first message. Episodes advance in
    lockstep, one batched ``generate`` per side and one batched sandbox call."""
    episodes = []
    for item in items:
        episode = Episode(item, agent=[dict(item.prompt[0])])
        if item.data["category"] == "agent_multi_turn":
            episode.user = [{"role": "system", "content": item.data["user_prompt"]}]
            episode.turn = "user"
        else:
            episode.agent.append(dict(item.prompt[1]))
        episodes.append(episode)
    try:
        if runner is not None:
            runner.start(episodes)
        while True:
            users = [e for e in episodes if not e.done and e.turn == "user"]
            if users:
                texts = user.generate([list(e.user) for e in users],
                                      max_new_tokens=settings.max_new_tokens,
                                      temperature=settings.temperature, seed=seed)
                for episode, generation in zip(users, texts, strict=True):
                    episode.user_said(generation.text)
            agents = [e for e in episodes if not e.done and e.turn == "agent"]
            if not users and not agents:
                break
            if agents:
                texts = agent.generate([list(e.agent) for e in agents],
                                       max_new_tokens=settings.max_new_tokens,
                                       temperature=settings.temperature, seed=seed)
                pending = []
                for episode, generation in zip(agents, texts, strict=True):
                    calls = episode.agent_said(generation.text, turns)
                    if calls is not None and runner is None:
                        episode.executed(None)
                    elif calls is not None:
                        pending.append((episode, calls))
                if runner is not None:
                    runner.run(pending)
        processes = [process_accuracy(e.item.data["milestones"], e.calls) for e in episodes]
        ends = runner.verdicts(episodes) if runner is not None else processes
    finally:
        close_sessions(episodes)
    return list(zip(ends, processes, strict=True))


def build(options: AcebenchSuiteOptions, context: Any) -> AcebenchSuite:
    return AcebenchSuite(options.data, options.categories, options.agent_turns,
                         sandbox=context.components.get("sandbox"),
                         user_factory=user_factory(options.user_backend, context,
                                                   "eval.options.acebench.user_backend"))
