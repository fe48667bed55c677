"""Guarded versions of library functions that modify whatever object they are given.

A stand-in module (``modules.py``) exposes these instead of the originals: ``functools.wraps``,
``functools.total_ordering`` and ``dataclasses.dataclass`` only act on the program's own
functions and classes, and ``dataclass`` only on identifier field names (it pastes them into
source it ``exec``s)."""

from __future__ import annotations

from typing import Any

from sandbox.ownership import PROGRAM_MODULE
from sandbox.violations import violation


def _program_target(obj: object, what: str) -> None:
    module = getattr(obj, "__module__", None) if not isinstance(obj, type) else \
        type.__getattribute__(obj, "__module__")
    if module != PROGRAM_MODULE:
        raise violation(f"{what} may only modify the program's own functions and classes")


def safe_wraps(wrapped: Any) -> Any:
    """``functools.wraps`` with its default attribute lists, onto program functions only."""
    import functools

    decorate = functools.wraps(wrapped)

    def apply(wrapper: Any) -> Any:
        _program_target(wrapper, "functools.wraps")
        return decorate(wrapper)

    return apply


def safe_total_ordering(cls: type) -> type:
    """``functools.total_ordering`` for the program's own classes only."""
    import functools

    _program_target(cls, "functools.total_ordering")
    return functools.total_ordering(cls)


def safe_dataclass(cls: Any = None, /, **options: Any) -> Any:
    """``dataclasses.dataclass`` for the program's own classes, whose annotation names must be
    identifiers: dataclasses pastes them into source it ``exec``s, and ``typing.TypedDict('X',
    {...})`` can build annotations with any string as a name."""
    import dataclasses
    import keyword

    def wrap(target: Any) -> Any:
        _program_target(target, "dataclasses.dataclass")
        for klass in type.__getattribute__(target, "__mro__"):
            annotations = klass.__dict__.get("__annotations__", {})
            for name in annotations:
                if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
                    raise violation(f"dataclass field name {name!r} is not an identifier")
        return dataclasses.dataclass(target, **options)

    return wrap if cls is None else wrap(cls)


#: What a stand-in holds instead of ``(module, attribute)``: the original, wrapped or replaced.
REPLACEMENTS: dict[tuple[str, str], Any] = {
    ("functools", "wraps"): lambda _original: safe_wraps,
    ("functools", "total_ordering"): lambda _original: safe_total_ordering,
    ("dataclasses", "dataclass"): lambda _original: safe_dataclass,
}
