"""BFCL's multi-turn simulators and checker, played inside a sandbox worker.

Trusted prelude source of the ``bfcl`` suite's multi-turn episodes (``plugins/evals/
bfcl_multi_turn.py`` drives them from the host), also importable for tests. BFCL's helper
``execute_multi_turn_func_call`` runs each call string through ``eval`` against its simulator
instances, and ``multi_turn_checker`` re-runs them: third-party code fed with the model's calls,
so both run in the worker, and the host only decodes replies (JSON) and talks to the episode.

The episode environment (``BfclEpisode``, injected; the program is a subclass with nothing of
its own) takes JSON requests as actions:

- ``{"op": "start", "entry": {"id", "initial_config", "involved_classes"}}``: create the
  simulator instances, as BFCL does first; the observation is ``{"methods": [...]}``;
- ``{"op": "execute", "calls": [{name: arguments}, ...]}``: run the calls; the observation is
  ``{"strings": [...], "results": [...]}``: the call strings BFCL evaluated (``""`` for a refused
  call) and the results shown to the model;
- ``{"op": "score", "turns": [...], "answer": [...], "category": "..."}``: BFCL's verdict on the
  turns' call strings; the reward is 1.0 when valid, and the episode ends.

Containment of the call strings, inside the worker too: a call string is built only from a
decoded call whose name is a public method of the entry's simulator classes, whose argument
names are identifiers and whose values are JSON values (written with ``repr``); the exact string
``eval`` will see (after BFCL's own method prefixing) is parsed and must be one call of that
method with literal keyword arguments only. Anything else is never given to BFCL: it is replaced
by an empty string, which BFCL's helper reports as an execution error without evaluating
anything, and the model is told the call was refused.
"""

import ast as _ast
import importlib as _importlib
import inspect as _inspect
import json as _json
import keyword as _keyword
import math as _math

__all__ = list(globals().get("__all__", [])) + ["BfclEpisode"]

_UTILS = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils"
_CHECKER = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"
_CONFIG = "bfcl_eval.constants.executable_backend_config"
#: What the fork servers import before forking (with the simulator classes' modules, from BFCL's
#: own table, which the suite reads through its loader: ``preludes/bfcl_data.py``).
PRELOAD = (_UTILS, _CHECKER, _CONFIG)
#: Most characters of one step's observation (the sandbox's observation limit is 32768).
MAX_SHOWN_CHARS = 28000


def public_methods(instances):
    """The method names BFCL's helper binds to its simulator ``instances``, by its own rule
    (``inspect.ismethod``, no leading underscore): the only names a call string may use."""
    return frozenset(name for instance in instances
                     for name, _ in _inspect.getmembers(instance, _inspect.ismethod)
                     if not name.startswith("_"))


def _is_json_value(value, depth=0):
    if depth > 32:
        return False
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return _math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json_value(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_value(v, depth + 1) for k, v in value.items())
    return False


def call_string(name, arguments, methods):
    """``name(key=repr(value),...)`` as BFCL's ``convert_to_function_call`` writes a decoded
    call, or ``None`` when the call could run anything beyond one simulator method with literal
    arguments."""
    if not isinstance(name, str) or name not in methods or not name.isidentifier() \
            or _keyword.iskeyword(name) or not isinstance(arguments, dict):
        return None
    parts = []
    for key, value in arguments.items():
        if not (isinstance(key, str) and key.isidentifier() and not _keyword.iskeyword(key)):
            return None
        if not _is_json_value(value):
            return None
        parts.append(f"{key}={value!r}")
    text = f"{name}({','.join(parts)})"
    # What BFCL's helper will eval: the same string with the method prefixed by its instance.
    prefixed = _importlib.import_module(_UTILS)._process_method_calls(
        text, {m: "instance" for m in methods})
    return text if single_literal_call(prefixed, name, arguments) else None


def single_literal_call(text, name, arguments):
    """Whether ``text`` is exactly ``instance.name(k=<literal>, ...)`` with ``arguments``."""
    try:
        call = _ast.parse(text, mode="eval").body
        if not (isinstance(call, _ast.Call) and not call.args
                and isinstance(call.func, _ast.Attribute) and call.func.attr == name
                and isinstance(call.func.value, _ast.Name) and call.func.value.id == "instance"):
            return False
        if [k.arg for k in call.keywords] != list(arguments):
            return False
        return all(type(_ast.literal_eval(k.value)) is type(arguments[k.arg])
                   for k in call.keywords if k.arg is not None)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return False


def _long_context(entry_id):
    category = entry_id.rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def _fit(results, limit=MAX_SHOWN_CHARS):
    """``results`` cut so that together they stay under ``limit`` characters."""
    each = max(200, limit // max(1, len(results)))
    return [r if len(r) <= each else r[:each] + " [... truncated by spade]" for r in results]


class BfclEpisode:
    """One BFCL multi-turn entry, played once in this worker (see the module docstring)."""

    #: BFCL keys its simulator instances by this name and the entry's id, in its module globals;
    #: the worker is this episode's alone, so one name is enough.
    run_name = "spade"

    def reset(self, seed=None):
        self._entry = None
        self._methods = frozenset()
        return "Send a request.", {}

    def step(self, action):
        request = _json.loads(action)
        op = request.get("op")
        if op == "start":
            self._entry = request["entry"]
            _, instances = self._run([])
            self._methods = public_methods(list(instances.values()))
            return _json.dumps({"methods": sorted(self._methods)}), 0.0, False, False, {}
        if self._entry is None:
            raise RuntimeError("start the episode first")
        if op == "execute":
            strings = []
            for call in request["calls"]:
                (name, arguments), = call.items()
                strings.append(call_string(name, arguments, self._methods) or "")
            results, _ = self._run(strings)
            shown = [str(result) if text else
                     f"Error during execution: {next(iter(call))!r} is not a function of this "
                     "task or its arguments are not plain JSON values."
                     for text, result, call in zip(strings, results, request["calls"])]
            observation = {"strings": strings, "results": _fit(shown)}
            return _json.dumps(observation), 0.0, False, False, {}
        if op == "score":
            return "Scored.", self._score(request), True, False, {}
        raise ValueError(f"unknown request {op!r}")

    def _run(self, strings):
        entry = self._entry
        return _importlib.import_module(_UTILS).execute_multi_turn_func_call(
            strings, entry["initial_config"], list(entry["involved_classes"]), self.run_name,
            entry["id"], long_context=_long_context(entry["id"]), is_evaL_run=False)

    def _score(self, request):
        truth = request["answer"]
        if len(request["turns"]) != len(truth):
            return 0.0
        entry = {"id": self._entry["id"], "initial_config": self._entry["initial_config"],
                 "involved_classes": list(self._entry["involved_classes"])}
        try:
            verdict = _importlib.import_module(_CHECKER).multi_turn_checker(
                request["turns"], truth, entry, request["category"], self.run_name)
        except Exception:  # noqa: BLE001 - BFCL's asserts on odd replies mean a failure
            return 0.0
        return 1.0 if verdict.get("valid") else 0.0

    def solution(self):
        return None

    def close(self):
        pass
