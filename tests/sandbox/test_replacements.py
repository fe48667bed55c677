"""Guarded ``functools.wraps``, ``functools.total_ordering`` and ``dataclasses.dataclass``: they
act on the program's own functions and classes, and refuse library ones."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sandbox.ownership import PROGRAM_MODULE
from sandbox.replacements import REPLACEMENTS, safe_dataclass, safe_total_ordering, safe_wraps
from sandbox.violations import VIOLATIONS, SandboxViolation


@pytest.fixture(autouse=True)
def _forget_violations():
    before = len(VIOLATIONS)
    yield
    del VIOLATIONS[before:]


def _program_class(name: str, body: dict) -> type:
    return type(name, (), {"__module__": PROGRAM_MODULE, **body})


def test_program_objects_get_the_real_behaviour():
    def wrapper(*args):
        return len(*args)

    wrapper.__module__ = PROGRAM_MODULE
    assert safe_wraps(len)(wrapper).__wrapped__ is len
    Rank = safe_total_ordering(_program_class("Rank", {
        "__init__": lambda self, n: setattr(self, "n", n),
        "__eq__": lambda self, other: self.n == other.n,
        "__lt__": lambda self, other: self.n < other.n}))
    assert Rank(3) >= Rank(2) and not Rank(1) > Rank(2)
    Point = safe_dataclass(frozen=True)(_program_class("Point", {"__annotations__": {"x": int}}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 2
    assert safe_dataclass(_program_class("Bare", {"__annotations__": {"y": int}}))(y=2).y == 2


def test_library_objects_and_odd_field_names_are_refused():
    for attempt in (lambda: safe_wraps(len)(json.dumps),
                    lambda: safe_total_ordering(json.JSONDecoder),
                    lambda: safe_dataclass(json.JSONDecoder)):
        with pytest.raises(SandboxViolation, match="only modify the program's own"):
            attempt()
    odd = _program_class("Odd", {"__annotations__": {"a b": int}})
    with pytest.raises(SandboxViolation, match="not an identifier"):
        safe_dataclass(odd)
    assert VIOLATIONS[-1].startswith("dataclass field name")


def test_the_stand_ins_hold_the_guarded_versions():
    assert REPLACEMENTS[("functools", "wraps")](None) is safe_wraps
    assert REPLACEMENTS[("dataclasses", "dataclass")](dataclasses.dataclass) is safe_dataclass
