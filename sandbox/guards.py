"""Runtime guards and the globals an untrusted program runs with.

The compile policy (``policy.py``) rewrites attribute reads, writes, in-place operators and
iteration into calls of the guard functions defined here. A refused access raises
:class:`SandboxViolation` (a ``BaseException``, so ``except Exception`` does not swallow it; see
``violations.py``) and is also recorded, so a program that catches it anyway is still reported as
``forbidden``. The guarded library helpers stand-ins expose are in ``replacements.py``.
"""

from __future__ import annotations

import _string  # the C helper str.format uses to split field names
import builtins
import operator
import string
import sys
import types
from typing import Any

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

from sandbox import modules
from sandbox.ownership import PRELUDE_MODULE, PROGRAM_MODULE, is_program_object
from sandbox.ownership import PROGRAM_TYPES as _program_types
from sandbox.policy import DENIED_ATTRIBUTES, SAFE_DUNDER_READS, is_dunder

# SandboxViolation and VIOLATIONS are also read as ``guards.X`` (worker, tests): same objects.
from sandbox.violations import VIOLATIONS, SandboxViolation, violation

#: Runtime-only refusals: names harmless on program objects but dangerous on library objects.
_DENIED_ON_LIBRARY_OBJECTS = frozenset({"tofile", "dump", "load", "ctypes", "cffi", "bit_generator",
                                        # an sqlite3 connection's escape hatches, should one leak
                                        "enable_load_extension", "load_extension",
                                        "set_authorizer", "backup", "iterdump"})
#: Public names that need the full check (denied, format wrappers, exception ``obj``).
_SLOW_NAMES = DENIED_ATTRIBUTES | _DENIED_ON_LIBRARY_OBJECTS | {"format", "format_map", "obj"}
_INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow,
    "<<=": operator.ilshift, ">>=": operator.irshift, "|=": operator.ior, "^=": operator.ixor,
    "&=": operator.iand, "@=": operator.imatmul,
}
_MISSING = object()


def _check_read(obj: object, name: str) -> None:
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if is_dunder(name):
        if name not in SAFE_DUNDER_READS:
            raise violation(f'reading attribute "{name}" is forbidden (dunder introspection)')
        return
    if name in DENIED_ATTRIBUTES:
        raise violation(f'reading attribute "{name}" is forbidden (frame, code or memory access)')
    if isinstance(obj, types.ModuleType):
        if name.startswith("_") or not modules.is_proxy(obj):
            raise violation(f'reading "{name}" from module {obj.__name__!r} is forbidden')
        return
    if is_program_object(obj):
        return
    if name.startswith("_"):
        raise violation(f'reading private attribute "{name}" of a {type(obj).__name__} '
                        "is forbidden (only the program's own objects expose private names)")
    if name in _DENIED_ON_LIBRARY_OBJECTS:
        raise violation(f'reading attribute "{name}" of a {type(obj).__name__} is forbidden')
    if name == "obj" and isinstance(obj, BaseException):
        raise violation('reading "obj" of an exception is forbidden')


class _SafeFormatter(string.Formatter):
    """``str.format`` whose field names (``{0.attr[key]}``) go through the guards."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = guarded_getattr(obj, key) if is_attr else obj[key]
        return obj, first


_FORMATTER = _SafeFormatter()


def _format_method(text: str | None, name: str) -> Any:
    if name == "format":
        if text is None:
            return lambda fmt, *args, **kwargs: _FORMATTER.vformat(str(fmt), args, kwargs)
        return lambda *args, **kwargs: _FORMATTER.vformat(text, args, kwargs)
    if text is None:
        return lambda fmt, mapping: _FORMATTER.vformat(str(fmt), (), mapping)
    return lambda mapping: _FORMATTER.vformat(text, (), mapping)


def guarded_getattr(obj: object, name: str, default: Any = _MISSING) -> Any:
    """``getattr`` for programs: refuses dunders, frames, private names of library objects and
    module internals; wraps ``str.format`` so format strings cannot walk attributes."""
    # The common case (a public, ordinary attribute of a non-module, or a private non-dunder
    # name of the program's own instance): nothing to refuse unless the value is a module.
    ordinary = type(name) is str and (
        (name[:1] != "_" and name not in _SLOW_NAMES and not isinstance(obj, types.ModuleType))
        or (name[:2] != "__" and _program_types.get(type(obj)) is True))
    if not ordinary:
        _check_read(obj, name)
        if name in ("format", "format_map") and (isinstance(obj, str) or obj is str):
            return _format_method(obj if isinstance(obj, str) else None, name)
    try:
        value = getattr(obj, name)
    except AttributeError:
        if default is _MISSING:
            raise
        return default
    if isinstance(value, types.ModuleType):
        return _module_value(value)
    return value


def _module_value(value: types.ModuleType) -> types.ModuleType:
    if modules.is_proxy(value):
        return value
    if value.__name__ in modules.ALLOWED_MODULES:
        return modules.proxy(value.__name__)
    raise violation(f"reaching module {value.__name__!r} is forbidden")


def guarded_hasattr(obj: object, name: str) -> bool:
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    except SandboxViolation:
        VIOLATIONS.pop()
        return False
    return True


def guarded_write(obj: Any) -> Any:
    """The ``_write_`` guard: modules and classes the program did not define are read-only."""
    if isinstance(obj, types.ModuleType):
        raise violation(f"modifying module {obj.__name__!r} is forbidden")
    if isinstance(obj, type) and not is_program_object(obj):
        raise violation(f"modifying class {obj.__name__!r} is forbidden (not defined by the "
                        "program)")
    return obj


def guarded_setattr(obj: Any, name: str, value: Any) -> None:
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if is_dunder(name) or name in DENIED_ATTRIBUTES:
        raise violation(f'setting attribute "{name}" is forbidden')
    setattr(guarded_write(obj), name, value)


def guarded_delattr(obj: Any, name: str) -> None:
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if is_dunder(name):
        raise violation(f'deleting attribute "{name}" is forbidden')
    delattr(guarded_write(obj), name)


def inplace_var(op: str, left: Any, right: Any) -> Any:
    return _INPLACE[op](left, right)


def inplace_attr(obj: Any, name: str, op: str, value: Any) -> None:
    """``obj.name op= value`` with one evaluation of ``obj``."""
    guarded_write(obj)
    current = guarded_getattr(obj, name)
    setattr(obj, name, _INPLACE[op](current, value))


def inplace_item(obj: Any, key: Any, op: str, value: Any) -> None:
    """``obj[key] op= value`` with one evaluation of ``obj`` and ``key``."""
    guarded_write(obj)
    obj[key] = _INPLACE[op](obj[key], value)


def guarded_import(name: str, globals: Any = None, locals: Any = None,  # noqa: A002
                   fromlist: Any = None, level: int = 0) -> types.ModuleType:
    if level:
        raise violation("relative imports are forbidden")
    try:
        return modules.allowed_import(name, fromlist)
    except ImportError as exc:
        raise violation(str(exc)) from None


class CappedPrint:
    """``print`` for programs: keeps at most 64 KB of text (readable as ``printed``), never
    writes to the worker's stdout."""

    limit = 65_536

    def __init__(self, _getattr_: Any = None) -> None:
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> None:
        if self.size < self.limit:
            text = str(text)[: self.limit - self.size]
            self.parts.append(text)
            self.size += len(text)

    def __call__(self) -> str:
        return "".join(self.parts)

    def _call_print(self, *objects: Any, **kwargs: Any) -> None:
        sep = kwargs.get("sep", " ")
        end = kwargs.get("end", "\n")
        self.write((sep if isinstance(sep, str) else " ").join(map(str, objects))
                   + (end if isinstance(end, str) else "\n"))


class _TypeMeta(type):
    """Makes :class:`SafeType` answer ``isinstance``/``issubclass`` exactly like ``type``."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, type)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) != 1 or kwargs:
            raise violation("type() with three arguments is forbidden (it builds classes with "
                            "arbitrary attribute and annotation names); use a class statement")
        return type(args[0])


class SafeType(metaclass=_TypeMeta):
    """``type`` for programs: ``type(obj)`` and ``isinstance(x, type)`` work; building a class
    with ``type(name, bases, namespace)`` does not (that namespace could carry names a class
    statement cannot, e.g. annotation keys that ``dataclasses`` pastes into generated source)."""


SafeType.__name__ = SafeType.__qualname__ = "type"


_SAFE_BUILTIN_NAMES = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "dir", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list",
    "map", "max", "min", "next", "object", "oct", "ord", "pow", "property", "range", "repr",
    "reversed", "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super",
    "tuple", "type", "zip", "None", "True", "False", "NotImplemented", "Ellipsis",
    "__build_class__",
)


_BUILTINS: dict[str, Any] | None = None


def safe_builtins() -> dict[str, Any]:
    """The builtins a program sees: no ``open``, ``eval``, ``exec``, ``compile``, ``globals``,
    ``vars``, ``input``, ``breakpoint``; guarded ``getattr``/``setattr``/``__import__``.

    Built once (in the fork server) and copied per program, so a program that mutates its copy
    changes nothing for anyone else."""
    global _BUILTINS
    if _BUILTINS is None:
        _BUILTINS = _build_builtins()
    return dict(_BUILTINS)


def _build_builtins() -> dict[str, Any]:
    table: dict[str, Any] = {name: getattr(builtins, name) for name in _SAFE_BUILTIN_NAMES}
    for name in dir(builtins):
        value = getattr(builtins, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            table[name] = value
    table.update({
        "type": SafeType,
        "getattr": guarded_getattr,
        "hasattr": guarded_hasattr,
        "setattr": guarded_setattr,
        "delattr": guarded_delattr,
        "__import__": guarded_import,
    })
    return table


def program_globals(prelude_names: dict[str, Any] | None = None,
                    own_modules: dict[str, types.ModuleType] | None = None) -> dict[str, Any]:
    """A fresh globals dict for one program: guards, safe builtins and the prelude's names.

    The dict is the ``__dict__`` of a module registered as ``__env__`` in ``sys.modules`` (in the
    worker only), because ``dataclasses`` and ``typing`` look a class's module up there.
    ``own_modules`` are stand-ins private to this instance (its own ``random``): ``import`` and
    the prelude's names give those instead of the shared stand-ins.
    """
    module = types.ModuleType(PROGRAM_MODULE)
    sys.modules[PROGRAM_MODULE] = module
    env = module.__dict__
    env.update({
        "__builtins__": safe_builtins(),
        "__name__": PROGRAM_MODULE,
        "__metaclass__": type,
        "_getattr_": guarded_getattr,
        "_getitem_": operator.getitem,
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": guarded_write,
        "_inplacevar_": inplace_var,
        "_inplace_attr_": inplace_attr,
        "_inplace_item_": inplace_item,
        "_apply_": lambda func, *args, **kwargs: func(*args, **kwargs),
        "_print_": CappedPrint,
    })
    if own_modules:
        env["__builtins__"]["__import__"] = _instance_import(own_modules)
    prelude_names = prelude_names or {}
    exported = prelude_names.get("__all__")
    if isinstance(exported, (list, tuple)):
        prelude_names = {n: prelude_names[n] for n in exported if n in prelude_names}
    for name, value in prelude_names.items():
        if is_dunder(name) or name in env:
            continue
        if isinstance(value, types.ModuleType):
            if value.__name__ not in modules.ALLOWED_MODULES:
                continue
            value = (own_modules or {}).get(value.__name__) or modules.proxy(value.__name__)
        env[name] = value
    return env


def _instance_import(own: dict[str, types.ModuleType]) -> Any:
    """``__import__`` for one instance: its own stand-ins first, then :func:`guarded_import`."""

    def instance_import(name: str, globals: Any = None, locals: Any = None,  # noqa: A002
                        fromlist: Any = None, level: int = 0) -> types.ModuleType:
        target = own.get(name) if not level and type(name) is str else None
        if target is None:
            return guarded_import(name, globals, locals, fromlist, level)
        for item in fromlist or ():
            if type(item) is not str or item.startswith("_") or not hasattr(target, item):
                raise violation(f"cannot import name {item!r} from {name!r} (not available "
                                "in the sandbox)")
        return target

    return instance_import


def run_prelude(code: types.CodeType | None,
                own_modules: dict[str, types.ModuleType] | None = None
                ) -> types.ModuleType | None:
    """Run the trusted family prelude (unrestricted) as module ``__prelude__`` and return it.

    With ``own_modules`` its ``import`` statements get those (the instance's own ``random``)."""
    if code is None:
        return None
    module = types.ModuleType(PRELUDE_MODULE)
    sys.modules[PRELUDE_MODULE] = module
    if own_modules:
        table = dict(vars(builtins))
        real_import = builtins.__import__

        def prelude_import(name: str, globals: Any = None, locals: Any = None,  # noqa: A002
                           fromlist: Any = (), level: int = 0) -> types.ModuleType:
            if not level and name in own_modules:
                return own_modules[name]
            return real_import(name, globals, locals, fromlist, level)

        table["__import__"] = prelude_import
        module.__dict__["__builtins__"] = table
    else:
        module.__dict__["__builtins__"] = builtins
    exec(code, module.__dict__)  # noqa: S102 - the prelude is trusted source from an installed family
    return module
