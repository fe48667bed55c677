"""A suite's trusted loader source answering data requests in a sandbox worker: answers larger
than an observation's usual limit come back whole, a failing request is a config error naming
the loader, each answer is asked once per process and interpreter, and a sandbox derived for
another interpreter (a suite's own environment) runs its workers there."""

from __future__ import annotations

import sys

import pytest

from spade_core.errors import ConfigError
from spade_core.eval.sandboxed_data import load_in_sandbox, load_once, loader_family

from fakes.eval_runs import needs_suite_env

LOADER = '''
import sys as _sys

_asked = []


def load_request(request):
    if request.get("op") == "fail":
        raise ValueError("no such file")
    _asked.append(1)
    return {"python": _sys.executable, "size": len(request.get("text", "")),
            "big": "x" * request.get("big", 0), "asked": len(_asked)}
'''


def test_answers_come_back_whole(scoring_sandbox):
    family = loader_family("test", LOADER)
    first, second = load_in_sandbox(scoring_sandbox, family, [{"big": 200_000}, {"text": "abc"}])
    assert len(first["big"]) == 200_000 and first["python"] == sys.executable
    assert second["size"] == 3 and second["asked"] == 2  # one worker answers them in turn
    with pytest.raises(ConfigError, match="scorer:data:test: loading.*no such file"):
        load_in_sandbox(scoring_sandbox, family, [{"op": "fail"}])


def test_each_request_is_asked_once(scoring_sandbox):
    family = loader_family("once", LOADER)
    first = load_once(scoring_sandbox, family, [{"text": "a"}])
    again, other = load_once(scoring_sandbox, family, [{"text": "a"}, {"text": "bb"}])
    assert again is first[0] and other["size"] == 2


@needs_suite_env("gem")
def test_a_derived_sandbox_runs_on_its_interpreter(scoring_sandbox):
    from plugins.evals.suite_envs import require

    python = require("gem")
    derived = scoring_sandbox.on_interpreter(python)
    assert scoring_sandbox.on_interpreter(python) is derived  # started once
    assert derived.isolation()["python"] == python
    answer, = load_in_sandbox(derived, loader_family("gem-test", LOADER), [{}])
    assert answer["python"] == python
