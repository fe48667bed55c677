"""What a component kind's base class asks for and offers: its abstract (required) members and
the members with a working default (optional). The contract checker, the docs' member tables and
the architecture test read these, so that the base classes stay the one statement of each
interface."""

from __future__ import annotations

from abc import ABC
from functools import cache


@cache
def required_members(base: type) -> tuple[str, ...]:
    """The abstract members a component of ``base`` must provide."""
    return tuple(sorted(getattr(base, "__abstractmethods__", ())))


@cache
def optional_members(base: type) -> tuple[str, ...]:
    """Members of ``base`` with a working default that a component may override."""
    abstract = set(required_members(base))
    names: set[str] = set()
    for klass in base.__mro__:
        if klass in (ABC, object):
            continue
        names.update(name for name, value in vars(klass).items()
                     if not name.startswith("_") and name not in abstract
                     and (callable(value) or isinstance(value, property)))
    return tuple(sorted(names))
