"""The text guards a worker installs for trusted library code that interprets text: the
literal-only ``eval``, the formula-only ``parse_expr``, and the import hook that reaches modules
imported after the guards are installed. The hostile corpus through every text-interpreting
dataset is a scenario (tests/scenarios/test_hostile_trusted_text.py)."""

from __future__ import annotations

import pytest

from plugins.families.preludes.text_guards import (TextGuardError, _make_guarded,
                                                   literal_arithmetic)

from fakes.cli import ROOT


@pytest.mark.parametrize("text, value", [
    ("1 + 2 * 3", 7), (" [1, (2, 3), {'a': -4}] ", [1, (2, 3), {"a": -4}]), ("2 ** 10", 1024),
    ("1 < 2 <= 2", True), ("not (True and False)", True), ("None", None), ("7 // 2 % 3", 0),
])
def test_literal_arithmetic_evaluates_literals_and_operators(text, value):
    assert literal_arithmetic(text) == value


@pytest.mark.parametrize("text, needle", [
    ("__import__('os')", "not Call"), ("x + 1", "Name"), ("().__class__", "Attribute"),
    ("[1][0]", "Subscript"), ("9 ** 9 ** 9", "too large"), ("1 +", "not an expression"),
    ("1" * 20001, "too long"),
])
def test_literal_arithmetic_refuses_everything_else(text, needle):
    with pytest.raises(TextGuardError, match=needle):
        literal_arithmetic(text)
    with pytest.raises(TextGuardError, match="code object"):
        literal_arithmetic(compile("1", "<text>", "eval"))


def test_the_guarded_parse_expr_parses_formulas_and_refuses_code():
    pytest.importorskip("sympy")
    from sympy import Symbol, sqrt
    from sympy.parsing.sympy_parser import parse_expr

    guarded = _make_guarded(parse_expr)
    x = Symbol("x")
    assert guarded("x**2 + 2*x + 1") == x**2 + 2 * x + 1 and guarded("sqrt(4)") == sqrt(4)
    for text in ("__import__('os').system('true')", "x.__class__", "open('/etc/passwd')"):
        with pytest.raises(TextGuardError, match="refused to parse a formula"):
            guarded(text)
    with pytest.raises(TextGuardError, match="takes text"):
        guarded(b"x")


_LATER_IMPORTS = """
import importlib, sys
import reasoning_gym
from plugins.families.preludes.text_guards import install_text_guards, literal_arithmetic
later = "reasoning_gym.arithmetic.gsm_symbolic.generators_00_49"
assert later not in sys.modules and "sympy.parsing.sympy_parser" in sys.modules
install_text_guards()
module = importlib.import_module(later)
assert module.eval is literal_arithmetic, module.__dict__.get("eval")
try:
    module.eval("__import__('os')")
except ValueError:
    pass
else:
    raise AssertionError("the later module's eval ran a call")
# the wrapped loaders keep the packages' resources: spell_backward reads its bundled word list
entry = reasoning_gym.create_dataset("spell_backward", seed=1, size=1)[0]
gsm = reasoning_gym.create_dataset("gsm_symbolic", seed=3, size=1)[0]
assert entry["answer"] and gsm["answer"]
print("ok")
"""


def test_guards_reach_reasoning_gym_modules_imported_after_they_are_installed():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _LATER_IMPORTS], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin"})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


_RUN_TWICE = """
import importlib.util, sys
source = open("plugins/families/preludes/text_guards.py").read()
for _ in range(2):  # the prelude run twice in one process, as by two in-process sandboxes
    exec(compile(source, "<prelude>", "exec"), {"__name__": "__prelude__"})
    del sys._spade_text_guards  # even when the second run does not see the first's flag
guarding = [f for f in sys.meta_path if getattr(f, "_spade_guarding_finder", False)]
assert len(guarding) == 1, sys.meta_path
print(importlib.util.find_spec("math_verify") is not None)
"""


def test_the_prelude_run_twice_installs_one_finder_and_finds_without_recursion():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _RUN_TWICE], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin"})
    assert done.returncode == 0 and done.stdout.strip() in ("True", "False"), done.stderr[-2000:]
