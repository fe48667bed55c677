"""Loading a suite's data inside the sandbox.

A suite whose package lives in an environment of its own (``spade suites``) cannot import it in
the host process: its items, tool schemas and constants are read by the suite's trusted loader
source in a sandbox worker on that environment's interpreter, and come back as JSON. The loader
defines ``load_request(request) -> JSON-ready value``; :data:`LOADER_BASE` turns each step's
action (a JSON request) into its answer, the observation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from spade_core.errors import ConfigError, SandboxError
from spade_core.eval.sandboxed_scoring import ScorerFamily
from spade_core.interfaces.sandbox import Sandbox

#: Trusted base of suite loaders: ``step`` parses the request and answers with the JSON of
#: ``load_request``'s value, which the suite's own loader source defines after it.
LOADER_BASE = '''
import json as _json

__all__ = list(globals().get("__all__", [])) + ["SuiteData"]


class SuiteData:
    """Answers one JSON request per step with the JSON of ``load_request(request)``."""

    def reset(self, seed=None):
        return "Send a request.", {}

    def step(self, action):
        return _json.dumps(load_request(_json.loads(action))), 0.0, False, False, {}

    def solution(self):
        return None

    def close(self):
        pass
'''
#: The program of every loader: the injected base, unchanged.
LOADER_PROGRAM = ('"""Answers the suite\'s data requests."""\n\n\n'
                  "class SuiteDataEnv(SuiteData):\n    pass\n")
#: Limits of a loader worker: whole data files come back as one observation, and the trusted
#: loader may start threads (tau2's task loading does) and open the package's files.
LOADER_LIMITS = {"max_observation_chars": 64 << 20, "memory_mb": 4096, "load_seconds": 120.0,
                 "reset_seconds": 60.0, "step_seconds": 300.0, "episode_seconds": 3600.0,
                 "cpu_seconds": 3600, "max_processes": 64, "max_open_files": 256}


def loader_family(name: str, source: str, imports: Sequence[str] = ()) -> ScorerFamily:
    """The pseudo-family of suite ``name``'s loader ``source`` (after :data:`LOADER_BASE`)."""
    return ScorerFamily(f"data:{name}", LOADER_BASE + "\n\n" + source, imports,
                        exported=("SuiteData",))


def load_in_sandbox(sandbox: Sandbox, family: ScorerFamily,
                    requests: Sequence[dict[str, Any]]) -> list[Any]:
    """The answer to each request, in order, from one loader worker. ``sandbox`` is a process
    sandbox (its ``open`` takes limits); a failing request is a ``ConfigError`` naming the
    suite and the worker's reason."""
    from dataclasses import replace

    limits = getattr(sandbox, "limits", None)
    kwargs = {"limits": replace(limits, **LOADER_LIMITS)} if limits is not None else {}
    answers: list[Any] = []
    try:
        session = sandbox.open(LOADER_PROGRAM, family=family, **kwargs)
        try:
            session.reset(0)
            for request in requests:
                answers.append(json.loads(session.step(json.dumps(request)).observation))
        finally:
            session.close()
    except SandboxError as exc:
        raise ConfigError(f"{family.name}: loading the suite's data in the sandbox failed: "
                          f"{exc}") from None
    return answers


#: Answers kept for the process's life, by (interpreter, loader, request): an environment's
#: data does not change while it runs.
_ANSWERS: dict[tuple[str, str, str], Any] = {}


def load_once(sandbox: Sandbox, family: ScorerFamily,
              requests: Sequence[dict[str, Any]]) -> list[Any]:
    """:func:`load_in_sandbox`, each answer asked once per process and interpreter (callers
    share the answers: they must not change them)."""
    where = str(sandbox.isolation().get("python", ""))
    keys = [(where, family.name, json.dumps(r, sort_keys=True)) for r in requests]
    missing = {key: request for key, request in zip(keys, requests) if key not in _ANSWERS}
    if missing:
        answers = load_in_sandbox(sandbox, family, list(missing.values()))
        _ANSWERS.update(zip(missing, answers))
    return [_ANSWERS[key] for key in keys]
