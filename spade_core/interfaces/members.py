"""What a component kind's base class asks for and offers: its abstract (required) members and
the members with a working default (optional). The contract checker, the docs' member tables and
the architecture test read these, so that the base classes stay the one statement of each
interface."""

from __future__ import annotations

import inspect
from abc import ABC
from collections.abc import Callable
from functools import cache
from typing import Any


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


def _own_function(klass: type, name: str) -> Callable[..., Any] | None:
    """``name`` as ``klass`` itself defines it, when it is a method (a static method's function
    has no ``self``: it is returned wrapped so that callers can tell)."""
    value = vars(klass).get(name)
    if isinstance(value, (staticmethod, classmethod)):
        return value
    return value if inspect.isfunction(value) else None


def _minimal_call(spec: inspect.Signature) -> tuple[list[str], list[str]]:
    """The call every caller of a method declared as ``spec`` (without ``self``) may make: its
    required arguments, positional ones by position, keyword-only ones by keyword. Optional
    arguments a component may leave out (as pluggy lets a hook implementation take fewer
    arguments than its specification): a caller passes them only where the interface says so
    (a family's ``designer_guide(skill)`` only for a family with skills)."""
    required = [p.name for p in spec.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    keyword = [p.name for p in spec.parameters.values()
               if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    return required, keyword


def _without_self(fn: Any) -> inspect.Signature:
    if isinstance(fn, staticmethod):
        return inspect.signature(fn.__func__)
    if isinstance(fn, classmethod):
        fn = fn.__func__
    signature = inspect.signature(fn)
    return signature.replace(parameters=list(signature.parameters.values())[1:])


def signature_problems(base: type, klass: type) -> list[tuple[str, str]]:
    """The methods of ``base`` that ``klass`` (or a class between them) overrides with a
    signature that cannot take the calls ``base`` declares, as pluggy checks a hook
    implementation's arguments against its specification: ``(member, what is wrong)`` each.
    Members ``base`` no longer has but ``base._retired_members`` names (a plugin written for an
    earlier interface defines them) are reported too."""
    problems: list[tuple[str, str]] = []
    inherited = set(base.__mro__)
    for name in sorted(set(required_members(base)) | set(optional_members(base))):
        declared = next((k for k in base.__mro__ if name in vars(k)), None)
        spec_fn = _own_function(declared, name) if declared is not None else None
        if spec_fn is None:
            continue
        owner = next((k for k in klass.__mro__ if name in vars(k)), None)
        if owner is None or owner in inherited:
            continue  # not overridden
        impl_fn = _own_function(owner, name)
        if impl_fn is None:
            continue  # overridden by an attribute or property: not a signature to compare
        try:
            spec, impl = _without_self(spec_fn), _without_self(impl_fn)
        except (TypeError, ValueError):
            continue
        positional, keyword = _minimal_call(spec)
        try:
            impl.bind(*positional, **{k: k for k in keyword})
        except TypeError as exc:
            shown = str(spec).replace("'", "")  # postponed annotations are strings
            problems.append((name, f"{owner.__name__}.{name}{impl} cannot be called as "
                                   f"{name}{shown} ({exc})"))
    for name in sorted(getattr(base, "_retired_members", {})):
        if any(name in vars(k) for k in klass.__mro__ if k not in inherited):
            problems.append((name, f"it defines {name}(), which {base.__name__} no longer has"))
    return problems
