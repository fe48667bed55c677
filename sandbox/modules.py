"""The modules a program may import, and the filtered stand-ins it actually receives.

A program never gets a real module object: ``import random`` yields a stand-in holding the public,
safe attributes of ``random`` (the same function objects, so ``random.seed`` still seeds the real
generator). Private names, submodules outside the allowlist (``dataclasses.inspect``,
``typing.sys``) and named dangerous functions (``typing.get_type_hints``, which ``eval``s
strings) are left out, so neither ``from X import y`` nor ``X.y`` can reach them.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterable
from typing import Any

from sandbox.replacements import REPLACEMENTS

#: Every importable module and which attributes its stand-in keeps: ``None`` keeps every public
#: non-module attribute; a frozenset keeps only those names.
ALLOWED_MODULES: dict[str, frozenset[str] | None] = {
    "__future__": None,
    "json": frozenset({"loads", "dumps", "JSONDecodeError", "JSONEncoder", "JSONDecoder"}),
    "re": None,
    "math": None,
    "cmath": None,
    "random": None,
    "string": frozenset({"ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits",
                         "hexdigits", "octdigits", "punctuation", "printable", "whitespace",
                         "capwords"}),
    "itertools": None,
    "functools": frozenset({"reduce", "partial", "lru_cache", "cache", "cmp_to_key",
                            "total_ordering", "wraps", "cached_property", "partialmethod"}),
    "collections": None,
    "collections.abc": None,
    "heapq": None,
    "bisect": None,
    "fractions": None,
    "decimal": None,
    "statistics": None,
    "dataclasses": frozenset({"dataclass", "field", "fields", "asdict", "astuple", "replace",
                              "is_dataclass", "InitVar", "FrozenInstanceError", "MISSING",
                              "KW_ONLY"}),
    "enum": None,
    "typing": None,
    "copy": frozenset({"copy", "deepcopy", "Error"}),
    "textwrap": None,
    "datetime": None,
    # The operator functions, which are the operators themselves; ``attrgetter`` is a guarded
    # version (below) and ``methodcaller`` is withheld (:data:`WITHHELD`).
    "operator": frozenset({
        "abs", "add", "and_", "attrgetter", "call", "concat", "contains", "countOf", "delitem",
        "eq", "floordiv", "ge", "getitem", "gt", "iadd", "iand", "iconcat", "ifloordiv",
        "ilshift", "imatmul", "imod", "imul", "index", "indexOf", "inv", "invert", "ior", "ipow",
        "irshift", "is_", "is_none", "is_not", "is_not_none", "isub", "itemgetter", "itruediv",
        "ixor", "le", "length_hint", "lshift", "lt", "matmul", "mod", "mul", "ne", "neg", "not_",
        "or_", "pos", "pow", "rshift", "setitem", "sub", "truediv", "truth", "xor"}),
    "gymnasium": frozenset({"Env", "Space", "spaces"}),
    "gymnasium.spaces": frozenset({"Box", "Discrete", "MultiDiscrete", "MultiBinary", "Text",
                                   "Dict", "Tuple", "Sequence", "Graph", "GraphInstance", "OneOf",
                                   "Space"}),
}

#: Public names left out of otherwise open modules because they evaluate strings or reach the
#: interpreter.
DENIED_NAMES: dict[str, frozenset[str]] = {
    "typing": frozenset({"get_type_hints", "ForwardRef", "evaluate_forward_ref",
                         "get_overloads", "clear_overloads"}),
    "random": frozenset({"SystemRandom"}),
    "enum": frozenset({"global_enum", "global_enum_repr", "global_str", "global_flag_repr"}),
}

#: Public names of allowed modules that programs may not have, and why: importing one is refused
#: at compile time (``policy.py``) and reading one says this instead of "no attribute".
WITHHELD: dict[str, dict[str, str]] = {
    "operator": {"methodcaller": "it calls any method by name, past the sandbox's attribute "
                                 "guards; call the method directly or use a lambda"},
}


def withheld_message(module: str, name: str) -> str | None:
    """Why ``module.name`` is not available to programs, or ``None`` when it is not withheld."""
    why = WITHHELD.get(module, {}).get(name)
    return None if why is None else f"{module}.{name} is not available in the sandbox: {why}"


def guarded_attrgetter(attr: str, *attrs: str) -> Any:
    """``operator.attrgetter`` whose lookups go through the sandbox's attribute guard, so
    ``attrgetter("__class__")`` is refused as ``x.__class__`` is."""
    # The guard module imports this one, so it is looked up rather than imported (an import would
    # be a cycle); a program only runs once the guards are loaded.
    guarded_getattr = sys.modules["sandbox.guards"].guarded_getattr
    names = (attr, *attrs)
    for name in names:
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
    paths = [name.split(".") for name in names]

    def resolve(obj: Any, path: list[str]) -> Any:
        for part in path:
            obj = guarded_getattr(obj, part)
        return obj

    def get(obj: Any) -> Any:
        if len(paths) == 1:
            return resolve(obj, paths[0])
        return tuple(resolve(obj, path) for path in paths)

    return get


#: Stand-in values this module replaces itself (``replacements.py`` holds the others).
_OWN_REPLACEMENTS: dict[tuple[str, str], Any] = {
    ("operator", "attrgetter"): lambda _original: guarded_attrgetter,
}

#: Modules imported lazily by allowed modules at call time; importing them up front keeps them
#: available after the worker drops privileges.
HIDDEN_DEPENDENCIES: tuple[str, ...] = ("_strptime", "encodings.idna", "unicodedata", "_decimal",
                                        "_json", "_random", "_bisect", "_heapq", "_statistics")

#: Modules heavy enough to import only when a program needs them.
HEAVY_MODULES: frozenset[str] = frozenset({"gymnasium", "gymnasium.spaces"})

_proxies: dict[str, types.ModuleType] = {}
#: Trusted modules a family provides (``family.modules``), compiled; executed on first import.
_family_code: dict[str, types.CodeType] = {}


def set_family_modules(code: dict[str, types.CodeType]) -> None:
    """Make the family's trusted modules importable in this worker (run on first import)."""
    _family_code.clear()
    _family_code.update(code)


def _family_proxy(name: str) -> types.ModuleType:
    cached = _proxies.get(name)
    if cached is not None:
        return cached
    import builtins

    real = types.ModuleType(name)
    real.__dict__["__builtins__"] = builtins
    sys.modules[name] = real
    exec(_family_code[name], real.__dict__)  # noqa: S102 - trusted source from an installed family
    exported = real.__dict__.get("__all__")
    names = exported if isinstance(exported, (list, tuple)) else [
        n for n in vars(real) if not n.startswith("_")]
    stand_in = types.ModuleType(name, real.__doc__)
    for attr in names:
        value = getattr(real, attr, None)
        if attr.startswith("_") or value is None or isinstance(value, types.ModuleType):
            continue
        setattr(stand_in, attr, value)
    _proxies[name] = stand_in
    return stand_in


def preload(names: Iterable[str] | None = None) -> list[str]:
    """Import the allowed modules (all light ones, or ``names``) and build their stand-ins.

    Returns the names that could not be imported (e.g. gymnasium not installed).
    """
    missing = []
    wanted = list(names) if names is not None else [
        n for n in ALLOWED_MODULES if n not in HEAVY_MODULES]
    if names is None:
        for hidden in HIDDEN_DEPENDENCIES:
            try:
                importlib.import_module(hidden)
            except ImportError:
                pass
    for name in wanted:
        try:
            importlib.import_module(name)
            proxy(name)
        except ImportError:
            missing.append(name)
    return missing


def import_libraries(names: Iterable[str]) -> list[str]:
    """Import installed libraries a family's trusted prelude uses (``family.preload_imports``), so
    workers fork with them loaded. They are not made importable by programs: only the prelude's
    own code holds them. Returns one message per library that could not be imported."""
    problems = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any import failure is reported, not fatal
            problems.append(f"{name} (not importable in the sandbox: {type(exc).__name__}: "
                            f"{str(exc)[:200]})")
    return problems


def heavy_imports(source: str) -> list[str]:
    """Heavy allowed modules a program mentions, so the server can import them before forking."""
    return sorted(n for n in HEAVY_MODULES if n.split(".")[0] in source)


def proxy(name: str) -> types.ModuleType:
    """The stand-in for allowed module ``name`` (built once, then shared)."""
    cached = _proxies.get(name)
    if cached is not None:
        return cached
    if name not in ALLOWED_MODULES:
        raise ImportError(f"module {name!r} is not allowed")
    real = sys.modules.get(name) or importlib.import_module(name)
    keep = ALLOWED_MODULES[name]
    denied = DENIED_NAMES.get(name, frozenset())
    stand_in = types.ModuleType(name, getattr(real, "__doc__", None))
    names = keep if keep is not None else [n for n in dir(real) if not n.startswith("_")]
    for attr in names:
        if attr in denied or attr.startswith("_"):
            continue
        try:
            value = getattr(real, attr)
        except AttributeError:
            continue
        if isinstance(value, types.ModuleType):
            full = value.__name__
            if full not in ALLOWED_MODULES:
                continue
            value = proxy(full)
        replace = REPLACEMENTS.get((name, attr)) or _OWN_REPLACEMENTS.get((name, attr))
        setattr(stand_in, attr, replace(value) if replace else value)
    if name in WITHHELD:
        stand_in.__getattr__ = _withheld_getattr(name)  # module __getattr__: missing names only
    _proxies[name] = stand_in
    return stand_in


def _withheld_getattr(module: str) -> Any:
    def missing(name: str) -> Any:
        message = withheld_message(module, name)
        if message is not None:
            from sandbox.violations import violation

            raise violation(message)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return missing


#: Stand-ins made for one environment instance (its own ``random``), by id; kept alive here.
_instance_stand_ins: dict[int, types.ModuleType] = {}


def instance_random(generator: Any) -> types.ModuleType:
    """A ``random`` stand-in whose module-level functions (``seed``, ``randint``, ``choice``...)
    are bound to ``generator`` instead of the shared hidden one, so each environment instance in
    a worker has a generator of its own (as it would in a worker of its own)."""
    import random

    shared = proxy("random")
    hidden = random._inst  # noqa: SLF001 - the generator random's module functions are bound to
    stand_in = types.ModuleType("random", shared.__doc__)
    for attr, value in vars(shared).items():
        if attr.startswith("_"):
            continue
        if getattr(value, "__self__", None) is hidden:
            value = getattr(generator, attr)
        setattr(stand_in, attr, value)
    _instance_stand_ins[id(stand_in)] = stand_in
    return stand_in


def is_proxy(obj: object) -> bool:
    return isinstance(obj, types.ModuleType) and (
        _proxies.get(obj.__name__) is obj or _instance_stand_ins.get(id(obj)) is obj)


def allowed_import(name: str, fromlist: Iterable[str] | None) -> types.ModuleType:
    """What ``import name`` / ``from name import ...`` yields, or ``ImportError``.

    For ``import a.b`` Python binds ``a``; for ``from a.b import c`` it reads ``c`` from ``a.b``.
    """
    if name in _family_code:
        target = _family_proxy(name)
        for item in fromlist or ():
            if not hasattr(target, item):
                raise ImportError(f"cannot import name {item!r} from {name!r}")
        return target
    if name not in ALLOWED_MODULES:
        raise ImportError(f"import of module {name!r} is not allowed; allowed modules: "
                          + ", ".join(sorted(n for n in ALLOWED_MODULES if n != "__future__")))
    target = proxy(name)
    if fromlist:
        for item in fromlist:
            withheld = withheld_message(name, item)
            if withheld is not None:
                raise ImportError(withheld)
            if not hasattr(target, item):
                raise ImportError(f"cannot import name {item!r} from {name!r} (not available "
                                  "in the sandbox)")
        return target
    top = name.split(".")[0]
    return proxy(top)
