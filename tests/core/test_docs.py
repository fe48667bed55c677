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
