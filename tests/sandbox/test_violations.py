"""What a refused access raises: a ``SandboxViolation`` that ``except Exception`` does not catch,
recorded so that a program that catches it anyway is still reported."""

from __future__ import annotations

from sandbox.violations import VIOLATIONS, SandboxViolation, violation


def test_a_violation_is_recorded_and_escapes_except_exception():
    before = len(VIOLATIONS)
    try:
        error = violation("reading x.__class__ is forbidden")
        assert isinstance(error, SandboxViolation) and not isinstance(error, Exception)
        assert str(error) == "reading x.__class__ is forbidden"
        assert VIOLATIONS[before:] == ["reading x.__class__ is forbidden"]
        caught = None
        try:
            try:
                raise error
            except Exception:  # what a program would write to swallow it
                caught = "swallowed"
        except SandboxViolation:
            caught = "escaped"
        assert caught == "escaped"
    finally:
        del VIOLATIONS[before:]
