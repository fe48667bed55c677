"""The modules a program may import: filtered stand-ins (``operator`` with a guarded
``attrgetter``, no ``methodcaller``), and a family's trusted modules, importable only with it."""

from __future__ import annotations

import pytest

from fakes.prelude_family import PreludeFamily as Family
from fakes.restricted import run_restricted as run

from sandbox.guards import SandboxViolation, program_globals
from sandbox.policy import compile_program
from spade_core.validation import validate


@pytest.fixture
def sandbox(limited_sandbox):
    return limited_sandbox


class ModuleFamily(Family):
    """A fake family that also provides a trusted importable module."""

    modules = {"helpers": "import re as _re\n__all__ = ['double']\n"
                          "def double(x):\n    return 2 * x\n"}

    def probe_actions(self):
        return ["nonsense"]


@pytest.mark.timeout(120)
def test_family_modules_are_importable_only_with_the_family(sandbox):
    program = '''
from helpers import double
import helpers
class DoubleEnv:
    def reset(self, seed=None):
        return f"{double(21)} {hasattr(helpers, 're')}", {}
    def step(self, action):
        return "x", 1.0, action == "42", False, {}
    def solution(self):
        return str(double(21))
'''
    family = ModuleFamily("RESULTS = {}")
    session = sandbox.open(program, family=family)
    assert session.reset(0)[0] == "42 False"
    session.close()
    [verdict] = validate(sandbox, [program], family=family)
    assert verdict.valid, verdict.message
    [plain] = validate(sandbox, [program])
    assert plain.category == "forbidden" and "helpers" in plain.message


def test_modules_are_filtered_stand_ins():
    env = run("import dataclasses, typing, random\nA = dataclasses\nB = typing\nC = random")
    assert not hasattr(env["A"], "sys") and not hasattr(env["A"], "inspect")
    assert not hasattr(env["B"], "get_type_hints")
    assert not hasattr(env["C"], "_os")
    code = compile_program("from typing import get_type_hints")
    with pytest.raises(SandboxViolation):
        exec(code, program_globals())


def test_operator_stand_in_holds_the_operators_and_a_guarded_attrgetter():
    import operator

    env = run("import operator\nOP = operator\nGET = operator.attrgetter('real', 'imag')(3)")
    assert env["OP"].add is operator.add and env["OP"].itemgetter is operator.itemgetter
    assert env["GET"] == (3, 0)
    assert env["OP"].attrgetter is not operator.attrgetter
    with pytest.raises(SandboxViolation, match="dunder"):
        run("import operator\noperator.attrgetter('__class__.__subclasses__')(1)")


OPERATOR_ENV = '''
import operator
from operator import itemgetter, attrgetter


class CalcEnv:
    OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "<": operator.lt}

    def __init__(self, **kwargs):
        self.reset()

    def reset(self, seed=None):
        self.a, self.b, self.op = 3, 4, "*"
        pairs = sorted([(2, "b"), (1, "a")], key=itemgetter(0))
        self.label = attrgetter("op")(self) + pairs[0][1]
        self.answer = self.OPS[self.op](self.a, self.b)
        return f"What is {self.a} {self.op} {self.b}? Answer with the number.", {}

    def solution(self):
        return [str(self.answer)]

    def step(self, action):
        ok = action.strip() == str(self.answer)
        return ("correct" if ok else "wrong", 1.0 if ok else 0.0, True, False, {})
'''


@pytest.fixture(scope="module")
def process_sandbox():
    from spade_core.plugins import load_plugins

    box = load_plugins().registry.build("sandbox", "process", {"workers": 1}, "test")
    yield box
    box.close()


@pytest.mark.timeout(120)
def test_operator_programs_validate_and_methodcaller_is_refused(process_sandbox):
    from spade_core.validation import validate

    withheld_import = OPERATOR_ENV.replace("attrgetter\n", "attrgetter, methodcaller\n", 1)
    withheld_read = OPERATOR_ENV.replace('attrgetter("op")(self)',
                                         'operator.methodcaller("upper")("x")')
    dunder_getter = OPERATOR_ENV.replace('attrgetter("op")(self)',
                                         'attrgetter("__class__")(self).__name__')
    ok, imported, read, getter = validate(
        process_sandbox, [OPERATOR_ENV, withheld_import, withheld_read, dunder_getter])
    assert ok.valid, ok
    for verdict in (imported, read):
        assert not verdict.valid and verdict.category == "forbidden", verdict
        assert "operator.methodcaller is not available in the sandbox" in verdict.message
        assert "calls any method by name" in verdict.message
    assert imported.line == 3  # refused when compiled, with its line
    assert not getter.valid and getter.category == "forbidden"
    assert '"__class__" is forbidden' in getter.message
