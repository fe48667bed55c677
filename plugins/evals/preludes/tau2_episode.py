"""A τ²-bench task's environment and evaluator, played inside a sandbox worker.

Trusted prelude source of the ``tau2`` suite's episodes, after ``tau2_loader.py``
(``plugins/evals/tau2_suite.py`` drives them from the host). The domains' tools are third-party
code fed with the model's arguments (retail's and airline's ``calculate`` ``eval`` s an
expression; telecom's customer calls tools on a simulated phone), and tau2's evaluator replays
both participants' calls on a fresh environment, so all of it runs here, never in the host.

The episode environment (``Tau2Episode``, injected; the program is a subclass with nothing of its
own) takes JSON requests as actions:

- ``{"op": "start", "domain", "task"}``: the domain's environment at the initial state of
  ``task`` (tau2's ``Task`` as JSON, read by the host from the package's data);
- ``{"op": "say", "role": "assistant"|"user", "content"}``: a message of the conversation;
- ``{"op": "tool", "role": "assistant"|"user", "calls": [{"name", "arguments"}, ...],
  "content"}``: the calls of the agent (default) or of the customer (telecom's user tools, on
  the customer's phone), run by the environment as tau2's orchestrator runs them; the
  observation is ``{"results": [...], "errors": n}`` (``n``: failed calls);
- ``{"op": "score", "termination": "user_stop"|"agent_stop"|"max_steps"|"too_many_errors"}``:
  tau2's ``evaluate_simulation`` (``EvaluationType.ALL``) on the whole trajectory; the reward is
  its reward, and the episode ends.
"""

import importlib as _importlib
import json as _json

__all__ = list(globals().get("__all__", [])) + ["Tau2Episode"]

#: Most characters of one tool result shown (the sandbox's observation limit is 32768).
MAX_RESULT_CHARS = 12000


def _tau2(name):
    load()  # tau2 with its litellm stand-in: defined by tau2_loader.py, earlier in the prelude
    return _importlib.import_module(name)


class Tau2Episode:
    """One τ²-bench task, played once in this worker (see the module docstring)."""

    def reset(self, seed=None):
        self._env = None
        self._messages = []
        self._calls = 0
        return "Send a request.", {}

    def step(self, action):
        request = _json.loads(action)
        op = request.get("op")
        message = _tau2("tau2.data_model.message")
        if op == "start":
            self._start(request["domain"], request["task"])
            return "Started.", 0.0, False, False, {}
        if self._env is None:
            raise RuntimeError("start the episode first")
        if op == "say":
            kind = message.AssistantMessage if request["role"] == "assistant" else \
                message.UserMessage
            self._messages.append(kind(role=request["role"], content=str(request["content"])))
            return "Said.", 0.0, False, False, {}
        if op == "tool":
            return _json.dumps(self._run(request)), 0.0, False, False, {}
        if op == "score":
            return "Scored.", self._score(request["termination"]), True, False, {}
        raise ValueError(f"unknown request {op!r}")

    def _start(self, domain, task):
        registry = _tau2("tau2.registry").registry
        self._domain = domain
        self._task = _tau2("tau2.data_model.tasks").Task.model_validate(task)
        self._env = registry.get_env_constructor(domain)()
        state = self._task.initial_state
        if state is not None:
            history = list(state.message_history or [])
            self._env.set_state(state.initialization_data, state.initialization_actions, history)
            self._messages.extend(history)

    def _run(self, request):
        message = _tau2("tau2.data_model.message")
        role = "user" if request.get("role") == "user" else "assistant"
        calls = []
        for call in request["calls"]:
            self._calls += 1
            arguments = call.get("arguments")
            calls.append(message.ToolCall(id=f"call_{self._calls}", name=str(call.get("name")),
                                          arguments=arguments if isinstance(arguments, dict)
                                          else {}, requestor=role))
        kind = message.UserMessage if role == "user" else message.AssistantMessage
        self._messages.append(kind(role=role, content=request.get("content") or None,
                                   tool_calls=calls))
        results, errors = [], 0
        for call in calls:
            answer = self._env.get_response(call)
            self._messages.append(answer)
            errors += bool(answer.error)
            text = str(answer.content)
            results.append(text if len(text) <= MAX_RESULT_CHARS
                           else text[:MAX_RESULT_CHARS] + " [... truncated by spade]")
        return {"results": results, "errors": errors}

    def _score(self, termination):
        simulation = _tau2("tau2.data_model.simulation")
        evaluator = _tau2("tau2.evaluator.evaluator")
        run = simulation.SimulationRun(
            id="spade", task_id=self._task.id, start_time="", end_time="", duration=0.0,
            termination_reason=simulation.TerminationReason(termination),
            messages=self._messages)
        info = evaluator.evaluate_simulation(run, self._task, evaluator.EvaluationType.ALL,
                                             solo_mode=False, domain=self._domain)
        return float(info.reward)

    def solution(self):
        return None

    def close(self):
        pass
