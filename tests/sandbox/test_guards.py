"""The runtime guards: accesses the compile policy cannot see (built names, ``format`` fields,
writes to library modules, private library attributes) are refused when they run, while ``type``
still answers ``isinstance`` and one-argument calls."""

from __future__ import annotations

import pytest

from fakes.restricted import run_restricted as run

from sandbox.guards import SandboxViolation, program_globals
from sandbox.policy import CompileFailure, compile_program


REFUSED_AT_RUN_TIME = [
    "getattr((), '__cla' + 'ss__')",
    "'{0.__class__}'.format(1)",
    "str.format('{0.__class__}', 1)",
    "'{x.__class__}'.format_map({'x': 1})",
    "import random\nrandom.random = None",
    "import json\nsetattr(json, 'dumps', None)",
    "import random\nrandom.Random.random = None",
    "import random\nrandom.Random(1)._randbelow(3)",
    "try:\n    (1).nope\nexcept AttributeError as e:\n    e.obj",
    "g = (i for i in [])\ngetattr(g, 'gi_' + 'frame')",
    "type('X', (), {'__annotations__': {'a': int}})",
    "import functools, random\nfunctools.wraps(len)(random.Random)",
    "import dataclasses, random\ndataclasses.dataclass(random.Random)",
    "from typing import TypedDict\nfrom dataclasses import dataclass\n"
    "dataclass(TypedDict('T', {'a b': int}))",
]


@pytest.mark.parametrize("source", REFUSED_AT_RUN_TIME)
def test_runtime_guards_refuse(source):
    code = compile_program(source)
    assert not isinstance(code, CompileFailure), code
    with pytest.raises(SandboxViolation):
        exec(code, program_globals())


def test_type_still_answers_isinstance_and_one_argument_calls():
    env = run("RESULT = (type(3) is int, isinstance(int, type), issubclass(bool, int), "
              "type(type(3)).__name__)")
    assert env["RESULT"] == (True, True, True, "type")
