"""An ACEBench agent task's simulated APIs, run inside a sandbox worker.

Trusted prelude source of the ``acebench`` suite's agent episodes
(``plugins/evals/acebench_suite.py`` drives them from the host). ACEBench's scenario classes
(``MessageApi``, ``ReminderApi``, ``FoodPlatform``, ``Travel``, ``BaseApi``) are third-party code
from the user's clone of the benchmark; the host reads their files as text and sends them here,
where they are compiled and run, never in the host. The agent's calls arrive as JSON (the host
decoded them with ``ast``; nothing of a reply is evaluated here either).

The episode environment (``AcebenchEpisode``, injected; the program is a subclass with nothing of
its own) takes JSON requests as actions:

- ``{"op": "start", "modules": {dotted name: source}, "classes": {class: module},
  "involved": [class, ...], "config": {...}}``: the modules become importable under their dotted
  names (ACEBench's files import one another so), and each involved class is instantiated and
  loaded with its initial config, then the ``BaseApi`` one (as ACEBench's
  ``execute_agent_func_call``);
- ``{"op": "call", "calls": [{"name", "arguments"}, ...]}``: each call runs on every involved
  instance with a public method of that name (the last result counts, as in ACEBench); the
  observation is the JSON list of results (a dict as a JSON object, anything else as text, an
  exception as ``Error during execution: ...``);
- ``{"op": "state", "saved": {class: [attribute, ...]}}``: the observation is the JSON end state
  ACEBench's checker reads, ``[{class: {attribute: value}}]`` in the involved order (empty when
  no call ran), and the episode ends.
"""

import copy as _copy
import importlib.abc as _abc
import importlib.util as _util
import inspect as _inspect
import json as _json
import sys as _sys

__all__ = list(globals().get("__all__", [])) + ["AcebenchEpisode"]

#: Most characters of one call's result shown (the sandbox's observation limit is 32768).
MAX_RESULT_CHARS = 8000


class _Sources(_abc.MetaPathFinder, _abc.Loader):
    """Serves the shipped scenario sources as modules (their parent folders as packages)."""

    def __init__(self, sources):
        self.sources = dict(sources)
        self.packages = {name.rsplit(".", depth)[0] for name in self.sources
                         for depth in range(1, name.count(".") + 1)}

    def find_spec(self, name, path=None, target=None):
        if name in self.sources or name in self.packages:
            return _util.spec_from_loader(name, self, is_package=name not in self.sources)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = self.sources.get(module.__name__)
        if source is not None:
            exec(compile(source, f"<acebench {module.__name__}>", "exec"), module.__dict__)


def _load(sources, classes):
    """The classes, from freshly executed modules (any earlier ones are dropped first)."""
    finder = _Sources(sources)
    for name in list(_sys.modules):
        if name in finder.sources or name in finder.packages:
            del _sys.modules[name]
    _sys.meta_path[:] = [f for f in _sys.meta_path if not isinstance(f, _Sources)]
    _sys.meta_path.insert(0, finder)
    found = {}
    for name, module in classes.items():
        if module in finder.sources:
            found[name] = getattr(__import__(module, fromlist=[name]), name)
    return found


def _shown(result):
    """One result as ACEBench passes it on: a dict as JSON data, anything else as text."""
    if isinstance(result, dict):
        try:
            return _json.loads(_json.dumps(result))
        except (TypeError, ValueError):
            result = str(result)
    text = result if isinstance(result, str) else str(result)
    return text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS] + " [... cut]"


class AcebenchEpisode:
    """One ACEBench agent task, played once in this worker (see the module docstring)."""

    def reset(self, seed=None):
        self._instances = None
        self._ran = False
        return "Send a request.", {}

    def step(self, action):
        request = _json.loads(action)
        op = request.get("op")
        if op == "start":
            self._start(request)
            return "Started.", 0.0, False, False, {}
        if self._instances is None:
            raise RuntimeError("start the episode first")
        if op == "call":
            results = [_shown(self._call(c.get("name"), c.get("arguments")))
                       for c in request["calls"]]
            return _json.dumps(results, ensure_ascii=False), 0.0, False, False, {}
        if op == "state":
            return _json.dumps(self._state(request["saved"]), ensure_ascii=False,
                               default=str), 0.0, True, False, {}
        raise ValueError(f"unknown request {op!r}")

    def _start(self, request):
        classes = _load(request["modules"], request["classes"])
        config = request.get("config") or {}
        self._instances = {}
        for name in request["involved"]:
            if name not in classes:
                raise ValueError(f"ACEBench scenario class {name!r} is not in the shipped code")
            instance = classes[name]()
            instance._load_scenario(_copy.deepcopy(config.get(name, {})), long_context=False)
            instance._load_scenario(_copy.deepcopy(config.get("BaseApi", {})),
                                    long_context=False)
            self._instances[name] = instance

    def _call(self, name, arguments):
        self._ran = True
        if not isinstance(name, str) or name.startswith("_") or not isinstance(arguments, dict):
            return f"Error during execution: no API named {name!r}"
        methods = [method for instance in self._instances.values()
                   for member, method in _inspect.getmembers(instance, _inspect.ismethod)
                   if member == name]
        if not methods:
            return f"Error during execution: no API named {name!r}"
        try:
            for method in methods:
                result = method(**arguments)
        except Exception as exc:  # noqa: BLE001 - ACEBench shows the error to the agent
            result = f"Error during execution: {exc}"
        return result

    def _state(self, saved):
        if not self._ran:
            return []
        state = []
        for name, instance in self._instances.items():
            attributes = vars(instance)
            state.append({name: {key: attributes[key] for key in saved.get(name, ())
                                 if key in attributes}})
        return _json.loads(_json.dumps(state, default=str))

    def solution(self):
        return None

    def close(self):
        pass
