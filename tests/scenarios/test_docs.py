"""Docs and code stay honest: every hook is documented with its arguments and has a test."""

from __future__ import annotations

import inspect
import re

import pytest

from spade_core import hookspecs

from fakes.cli import ROOT

HOOKS = sorted(
    name for name, fn in vars(hookspecs).items()
    if callable(fn) and hasattr(fn, "spade_spec")
)


def test_there_are_hooks():
    assert "register_difficulty_estimators" in HOOKS and "spade_run_end" in HOOKS


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_documented_with_arguments(hook):
    text = (ROOT / "docs" / "plugins.md").read_text()
    params = list(inspect.signature(getattr(hookspecs, hook)).parameters)
    heading = f"### `{hook}({', '.join(params)})`"
    assert heading in text, f"docs/plugins.md lacks the heading {heading}"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_test(hook):
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    assert re.search(rf"def test_hook_{hook}\b", tests), f"no test_hook_{hook} in tests/"


# -- the examples of docs/estimators.md run --------------------------------------------------


def _estimator_examples() -> list[str]:
    """The ``python`` blocks of docs/estimators.md that stand alone (they import what they use)."""
    text = (ROOT / "docs" / "estimators.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return [b for b in blocks if re.match(r"(from|import) ", b)]


def test_the_estimator_guide_examples_run():
    examples = _estimator_examples()
    assert examples, "docs/estimators.md has no runnable example left"
    for block in examples:
        exec(compile(block, str(ROOT / "docs" / "estimators.md"), "exec"), {"__name__": "doc"})


def test_the_estimator_guide_lists_the_input_fields_in_the_class_order():
    import dataclasses
    import typing

    from spade_core.interfaces import EstimateInput

    text = (ROOT / "docs" / "estimators.md").read_text()
    section = text[text.index("## The estimator interface"):]
    rows = re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", section, flags=re.M)
    fields = [f.name for f in dataclasses.fields(EstimateInput)]
    assert [name for name, _ in rows] == fields
    hints = typing.get_type_hints(EstimateInput)
    assert dict(rows)["step_timeouts"] == hints["step_timeouts"].__name__ == "int"
    assert "description" in dict(rows)["env"] or "`description`" in section
