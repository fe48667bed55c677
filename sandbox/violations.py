"""What a refused access raises, and the record of every refusal in this worker.

Kept apart from ``guards.py`` so the stand-in modules (``modules.py``) and their guarded library
helpers (``replacements.py``) can refuse things without importing the guards."""

from __future__ import annotations


class SandboxViolation(BaseException):
    """The program tried something the sandbox refuses (reported as ``forbidden``)."""


#: Violations seen in this worker, in order (the worker reports the first one). Only ever
#: appended to and popped, never rebound, so every importer shares this one list.
VIOLATIONS: list[str] = []


def violation(message: str) -> SandboxViolation:
    """Record a refusal and return the exception to raise (recorded so that a program that
    catches it anyway is still reported ``forbidden``)."""
    VIOLATIONS.append(message)
    return SandboxViolation(message)
