"""Accept components that follow an interface without subclassing it (duck typing).

The documented contract of each component kind is its base class. A third-party object that has
every required method but does not subclass the base is wrapped here, once, when it is built: the
wrapper *is* an instance of the base class, forwards the required methods and whatever optional
ones the object has, and uses the base class's defaults for the rest. This module is the one place
that looks up component members by name (see ``docs/plugins.md``); the loop calls every method
unconditionally.
"""

from __future__ import annotations

import inspect
from abc import ABC
from functools import cache
from typing import Any

from spade_core.interfaces.estimator import DifficultyEstimator
from spade_core.interfaces.sandbox import Sandbox, SandboxSession

#: Wrapper classes already made, by base class, wrapped type and the optional members present.
_WRAPPERS: dict[tuple[type, type, frozenset[str]], type] = {}
#: Attributes that are data, not methods: forwarded when the object has them.
_DATA = ("name", "batch_size", "env_class")
#: Required members an object may lack when it has the named alternative, from which the base
#: class derives them: an estimator may define only ``estimate_with_history`` (interface 2).
_DERIVABLE: dict[tuple[type, str], str] = {
    (DifficultyEstimator, "estimate"): "estimate_with_history",
}


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


def missing_members(obj: object, base: type) -> list[str]:
    """Required members of ``base`` that ``obj`` lacks (and that ``base`` cannot derive from an
    alternative ``obj`` has)."""
    if isinstance(obj, base):
        return []
    return [name for name in required_members(base)
            if not hasattr(obj, name) and not _derivable(obj, base, name)]


def _derivable(obj: object, base: type, name: str) -> bool:
    """Whether ``obj`` has the alternative from which ``base`` derives its required ``name`` (a
    wrapper then leaves ``name`` to the base class unless ``obj`` has it too)."""
    alternative = _DERIVABLE.get((base, name))
    return alternative is not None and hasattr(obj, alternative)


def _accepts(function: Any, keyword: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == keyword or p.kind is p.VAR_KEYWORD for p in parameters)


def _forward(name: str, base: type) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        target = getattr(self._wrapped, name)
        if name == "solution_actions" and "tools" in kwargs and not _accepts(target, "tools"):
            kwargs.pop("tools")  # families written before ``tools=`` joined the signature
        return target(*args, **kwargs)

    method.__name__ = name
    method.__doc__ = getattr(base, name).__doc__
    return method


def _forward_property(name: str) -> property:
    return property(lambda self: getattr(self._wrapped, name))


def _wrapper_class(base: type, obj: object) -> type:
    namespace: dict[str, Any] = {
        "__init__": lambda self, wrapped: object.__setattr__(self, "_wrapped", wrapped),
        "__getattr__": lambda self, name: getattr(self._wrapped, name),
        "__repr__": lambda self: f"<{base.__name__} conforming {self._wrapped!r}>",
    }
    required = required_members(base)
    for name in required + optional_members(base):
        declared = inspect.getattr_static(base, name)
        if hasattr(obj, name) or (name in required and not _derivable(obj, base, name)):
            namespace[name] = _forward_property(name) if isinstance(declared, property) \
                else _forward(name, base)
    for name in _DATA:
        if hasattr(obj, name) and name not in namespace:
            namespace[name] = _forward_property(name)
    if base is Sandbox:
        namespace.update(_session_wrapping(namespace))
    return type(f"Conforming{base.__name__}", (base,), namespace)


def _session_wrapping(namespace: dict[str, Any]) -> dict[str, Any]:
    """A duck-typed sandbox may open duck-typed sessions: wrap those too."""
    opened = namespace["open"]
    many = namespace.get("open_many")

    def open_(self: Any, program: str, *, family: Any = None) -> SandboxSession:
        return conform(SandboxSession, opened(self, program, family=family))

    overrides: dict[str, Any] = {"open": open_}
    if many is not None:
        def open_many(self: Any, program: str, count: int, *, family: Any = None) -> list:
            return [conform(SandboxSession, s) for s in many(self, program, count, family=family)]

        overrides["open_many"] = open_many
    return overrides


def conform(base: type, obj: Any) -> Any:
    """``obj`` itself when it subclasses ``base``; else a wrapper that does, when ``obj`` has every
    required member. Raises ``TypeError`` naming what is missing otherwise."""
    if isinstance(obj, base):
        return obj
    missing = missing_members(obj, base)
    if missing:
        raise TypeError(f"{type(obj).__name__} does not implement {base.__name__}: missing "
                        f"{', '.join(missing)} (subclass spade_core.interfaces.{base.__name__})")
    present = frozenset(n for n in optional_members(base) + _DATA if hasattr(obj, n))
    key = (base, type(obj), present)
    wrapper = _WRAPPERS.get(key)
    if wrapper is None:
        wrapper = _WRAPPERS[key] = _wrapper_class(base, obj)
    return wrapper(obj)
