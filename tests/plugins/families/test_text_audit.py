"""The audit of code that interprets text: the interpreting calls of a module found from its
source (not a regex compile, not a module's own function of the same name), how each is held,
and the table docs/sandbox.md shows. (The audit of reasoning-gym itself: the sandbox's trusted
text tests.)"""

from __future__ import annotations

import importlib
import sys

from plugins.families.text_audit import CallSite, DatasetAudit, held_by, markdown, module_sites

MODULE = '''
import marshal
import re


def parse_expr(text):
    return text.split()


def score(answer):
    pattern = re.compile("x")
    words = parse_expr(answer)
    return eval(answer), marshal.loads(b""), pattern, words
'''


def test_interpreting_calls_are_found_and_lookalikes_left_out(tmp_path, monkeypatch):
    (tmp_path / "audited_module.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "audited_module", raising=False)
    importlib.import_module("audited_module")
    sites = module_sites("audited_module")
    assert [(s.call, s.function) for s in sites] == [("eval", "score"),
                                                     ("marshal.loads", "score")]
    assert all(s.module == "audited_module" and s.line > 10 for s in sites)


def test_the_table_lists_flagged_datasets_with_how_they_are_held():
    results = {
        "safe": DatasetAudit("safe"),
        "formula": DatasetAudit("formula", [CallSite("reasoning_gym.x.y", 7, "sympy.sympify",
                                                     "score_answer")], ["compile"]),
        "arith": DatasetAudit("arith", [CallSite("reasoning_gym.a", 3, "eval", "score")]),
    }
    assert not results["safe"].interprets_text and results["formula"].interprets_text
    assert held_by(results["formula"]).startswith("`guarded_parse_expr`")
    assert "literal_arithmetic" in held_by(results["arith"])
    assert held_by(DatasetAudit("other", [CallSite("m", 1, "pickle.loads", "f")])) == "OS layer"
    rows = markdown(results).splitlines()
    assert rows[0].startswith("| dataset |") and len(rows) == 4  # header, rule, two flagged
    assert rows[2].startswith("| `arith` | `a:3` `eval` in `score` | no |")
    assert rows[3].startswith("| `formula` | `x.y:7` `sympy.sympify` in `score_answer` | yes |")
