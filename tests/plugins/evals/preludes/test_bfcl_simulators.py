"""BFCL's multi-turn simulators as a sandbox episode: the call strings it builds from a model's
tool calls are literal calls of simulator methods, and the string BFCL evaluates is checked on
its own. The episodes themselves are played through the suite
(tests/plugins/evals/test_bfcl_multi_turn.py)."""

from __future__ import annotations

import json

from plugins.evals.preludes.bfcl_simulators import single_literal_call

from fakes.eval_runs import needs_bfcl, run_on_suite_env


@needs_bfcl
def test_call_strings_are_literal_calls_of_simulator_methods():
    # Run by the bfcl environment's interpreter: call_string asks BFCL's own helper.
    printed = run_on_suite_env("bfcl", """
import json
from plugins.evals.preludes.bfcl_simulators import call_string
methods = frozenset({"mkdir", "echo"})
print(json.dumps([call_string(name, arguments, methods) for name, arguments in [
    ("mkdir", {"dir_name": "a"}),
    ("__import__('os').system", {"command": "true"}),  # not a simulator method
    ("open", {"file": "x", "mode": "w"}),               # a builtin, not a method
    ("mkdir", {"dir_name=__import__('os').getcwd(),x": "a"}),  # argument name injection
    ("mkdir", {"dir_name": float("nan")}),              # not a JSON value: repr is a name
    ("mkdir", {"dir_name": {1, 2}})]]))                 # not a JSON value at all
""")
    assert json.loads(printed) == ["mkdir(dir_name='a')", None, None, None, None, None]


def test_the_string_bfcl_evaluates_is_checked_on_its_own():
    assert single_literal_call("instance.mkdir(dir_name='a')", "mkdir", {"dir_name": "a"})
    for text in ("instance.mkdir(dir_name=__import__('os').getcwd())",  # not a literal
                 "instance.mkdir(dir_name='a'); import os",              # not one expression
                 "mkdir(dir_name='a')",                                  # not the instance's
                 "instance.mkdir('a')",                                  # positional
                 "instance.mkdir(dir_name='a', x=1)"):                   # other arguments
        assert not single_literal_call(text, "mkdir", {"dir_name": "a"}), text
