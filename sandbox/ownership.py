"""Which code is the program's own: the module names programs and family preludes run under, and
the test the guards use to tell the program's objects from library ones.

A leaf module (no sandbox imports) so the compile policy, the guards and the guarded library
helpers can all share it."""

from __future__ import annotations

#: Module name programs run under; classes they define carry it in ``__module__``.
PROGRAM_MODULE = "__env__"
#: Module name the trusted family prelude runs under.
PRELUDE_MODULE = "__prelude__"

#: ``is_program_object`` answers per class, cached (the guards' fast path reads it directly).
PROGRAM_TYPES: dict[type, bool] = {}


def is_program_object(obj: object) -> bool:
    """Whether ``obj`` is (an instance of) a class the program or its trusted prelude defined."""
    cls = obj if isinstance(obj, type) else type(obj)
    known = PROGRAM_TYPES.get(cls)
    if known is not None:
        return known
    try:
        module = type.__getattribute__(cls, "__module__")
    except AttributeError:
        module = None
    verdict = module in (PROGRAM_MODULE, PRELUDE_MODULE)
    PROGRAM_TYPES[cls] = verdict
    return verdict
