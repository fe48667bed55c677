"""The compile policy: RestrictedPython widened to accept ordinary environment code.

RestrictedPython's default policy refuses much of what generated environments contain
(``self._state``, ``self.steps += 1``, ``x: int = 0`` in a dataclass). This policy accepts those,
while still refusing dunder introspection, frame and code attributes, guard-name shadowing,
async code and ``try/except*``. It is defence in depth: the OS isolation in ``server.py`` is the
real boundary. Runtime checks (attribute reads, imports, writes) live in ``guards.py``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from RestrictedPython.transformer import (
    INSPECT_ATTRIBUTES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)

from sandbox.modules import ALLOWED_MODULES, withheld_message

#: File name given to compiled programs (tracebacks point at ``<env>`` lines).
PROGRAM_FILENAME = "<env>"

#: Special methods a program may define in its classes (and call as ``super().__init__()``).
SAFE_DUNDER_METHODS = frozenset({
    "__init__", "__post_init__", "__repr__", "__str__", "__hash__", "__bool__", "__len__",
    "__iter__", "__next__", "__contains__", "__getitem__", "__setitem__", "__delitem__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__call__",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__floordiv__", "__mod__", "__neg__", "__pos__", "__abs__", "__and__", "__or__", "__xor__",
    "__enter__", "__exit__", "__reversed__", "__copy__", "__deepcopy__", "__int__", "__float__",
    "__index__", "__round__",
})
#: Dunder attributes a program may read: the special methods above and harmless names.
SAFE_DUNDER_READS = SAFE_DUNDER_METHODS | frozenset({"__name__", "__qualname__", "__doc__"})
#: Non-dunder attribute names that lead to frames, code, memory or files.
DENIED_ATTRIBUTES = frozenset(INSPECT_ATTRIBUTES) | frozenset({
    "ctypes", "cffi", "_getframe", "func_globals", "func_code",
    # gymnasium.Env methods that are plain getattr/setattr on any object passed as ``self``
    "get_wrapper_attr", "set_wrapper_attr", "has_wrapper_attr",
})
#: Names that only the host may bind: RestrictedPython's guard names and the print collector.
_GUARD_NAME = re.compile(r"^_[A-Za-z0-9_]*_$")
_RESERVED = frozenset({"print", "printed", "builtins", "breakpoint", "_print", "__builtins__",
                       "__import__", "__metaclass__"})


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


@dataclass(frozen=True)
class CompileFailure:
    """Why a program did not compile: ``syntax`` or ``forbidden``, with the first line at fault."""

    category: str
    message: str
    line: int | None


class EnvPolicy(RestrictingNodeTransformer):
    """RestrictedPython's transformer with the widenings environment code needs."""

    #: Modules importable besides :data:`ALLOWED_MODULES` (a family's trusted modules).
    extra_modules: frozenset[str] = frozenset()

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003 - RestrictedPython's API
        super().__init__(*args, **kwargs)
        self._classes: list[str] = []

    # -- names ----------------------------------------------------------------------------
    def check_name(self, node, name, allow_magic_methods=False):  # noqa: ANN001, ANN201
        if name is None:
            return
        if is_dunder(name):
            if not (allow_magic_methods and name in SAFE_DUNDER_METHODS):
                self.error(node, f'"{name}" is a forbidden name: dunder names are reserved.')
        elif name == "_":
            return
        elif _GUARD_NAME.match(name) or name in _RESERVED:
            self.error(node, f'"{name}" is a reserved name (the sandbox binds it).')

    def visit_Name(self, node):  # noqa: ANN001, ANN201
        if isinstance(node.ctx, ast.Load) and node.id == "__name__":
            return node
        return super().visit_Name(node)

    def check_import_names(self, node):  # noqa: ANN001, ANN201
        for alias in node.names:
            if alias.name.startswith("_") and not (
                isinstance(node, ast.ImportFrom) and node.module == "__future__"
            ):
                self.error(node, f'import of private name "{alias.name}" is forbidden.')
            for part in alias.name.split("."):
                if part.startswith("_") and isinstance(node, ast.Import):
                    self.error(node, f'import of private module "{alias.name}" is forbidden.')
        if isinstance(node, ast.ImportFrom) and (node.level or 0) > 0:
            self.error(node, "relative imports are forbidden.")
        wanted = [node.module or ""] if isinstance(node, ast.ImportFrom) else [
            alias.name for alias in node.names]
        for module in wanted:
            if module not in ALLOWED_MODULES and module not in self.extra_modules:
                self.error(node, f'import of module "{module}" is forbidden (not in the '
                           "sandbox's allowlist).")
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                withheld = withheld_message(node.module or "", alias.name)
                if withheld is not None:
                    self.error(node, f"{withheld}.")
        return super().check_import_names(node)

    # -- attributes -----------------------------------------------------------------------
    def _mangle(self, attr: str) -> str:
        if attr.startswith("__") and not attr.endswith("__") and self._classes:
            owner = self._classes[-1].lstrip("_")
            if owner:
                return f"_{owner}{attr}"
        return attr

    def _check_attr(self, node: ast.AST, attr: str, reading: bool) -> None:
        if is_dunder(attr):
            allowed = SAFE_DUNDER_READS if reading else frozenset()
            if attr not in allowed:
                self.error(node, f'attribute "{attr}" is forbidden (dunder introspection).')
        elif attr in DENIED_ATTRIBUTES:
            self.error(node, f'attribute "{attr}" is forbidden (frame, code or memory access).')

    def visit_Attribute(self, node):  # noqa: ANN001, ANN201
        attr = self._mangle(node.attr)
        self._check_attr(node, attr, isinstance(node.ctx, ast.Load))
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            call = ast.Call(func=ast.Name("_getattr_", ast.Load()),
                            args=[node.value, ast.Constant(attr)], keywords=[])
            copy_locations(call, node)
            return call
        guarded = ast.Call(func=ast.Name("_write_", ast.Load()), args=[node.value], keywords=[])
        copy_locations(guarded, node.value)
        node.value = guarded
        node.attr = attr
        return node

    # -- statements RestrictedPython refuses that environment code needs --------------------
    def visit_AugAssign(self, node):  # noqa: ANN001, ANN201
        target = node.target
        op = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        if isinstance(target, ast.Attribute):
            attr = self._mangle(target.attr)
            self._check_attr(target, attr, reading=False)
            obj = self.visit(target.value)
            value = self.visit(node.value)
            call = ast.Call(func=ast.Name("_inplace_attr_", ast.Load()),
                            args=[obj, ast.Constant(attr), op, value], keywords=[])
        elif isinstance(target, ast.Subscript):
            obj = self.visit(target.value)
            key = self.visit(_slice_to_expr(target.slice))
            value = self.visit(node.value)
            call = ast.Call(func=ast.Name("_inplace_item_", ast.Load()),
                            args=[obj, key, op, value], keywords=[])
        else:
            return super().visit_AugAssign(node)
        stmt = ast.Expr(value=call)
        copy_locations(stmt, node)
        ast.fix_missing_locations(stmt)
        return stmt

    def visit_AnnAssign(self, node):  # noqa: ANN001, ANN201
        if isinstance(node.target, ast.Name):
            self.check_name(node, node.target.id)
            return self.node_contents_visit(node)
        if node.value is None:
            stmt = ast.Pass()
            copy_locations(stmt, node)
            return stmt
        assign = ast.Assign(targets=[node.target], value=node.value)
        copy_locations(assign, node)
        return self.visit_Assign(assign)

    def visit_Nonlocal(self, node):  # noqa: ANN001, ANN201
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_ClassDef(self, node):  # noqa: ANN001, ANN201
        self._classes.append(node.name)
        try:
            return super().visit_ClassDef(node)
        finally:
            self._classes.pop()


def _slice_to_expr(node: ast.expr) -> ast.expr:
    """``a[1:2] += x`` needs the slice as a value: turn ``ast.Slice`` into ``slice(...)``."""
    if isinstance(node, ast.Slice):
        args = [part if part is not None else ast.Constant(None)
                for part in (node.lower, node.upper, node.step)]
        call = ast.Call(func=ast.Name("slice", ast.Load()), args=args, keywords=[])
        copy_locations(call, node)
        return call
    if isinstance(node, ast.Tuple):
        node.elts = [_slice_to_expr(e) for e in node.elts]
        node.ctx = ast.Load()
    return node


_LINE = re.compile(r"[Ll]ine (\d+)")


def compile_program(source: str, filename: str = PROGRAM_FILENAME,
                    max_chars: int = 200_000, extra_modules: frozenset[str] = frozenset()):
    """Compile an untrusted program under :class:`EnvPolicy`.

    Returns a code object, or a :class:`CompileFailure` naming the construct and line. Never
    raises: a compiler crash on hostile input (deep nesting, huge literals) is a ``syntax`` failure.
    """
    from RestrictedPython import compile_restricted_exec

    if len(source) > max_chars:
        return CompileFailure("syntax", f"program is {len(source)} characters; the limit is "
                              f"{max_chars}", None)
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return CompileFailure("syntax", f"SyntaxError: {exc.msg}",
                              exc.lineno)
    except (RecursionError, MemoryError, ValueError) as exc:
        return CompileFailure("syntax", f"{type(exc).__name__} while parsing", None)
    try:
        policy = EnvPolicy if not extra_modules else type(
            "FamilyEnvPolicy", (EnvPolicy,), {"extra_modules": frozenset(extra_modules)})
        # The tree parsed above, not the source: RestrictedPython would parse it again.
        result = compile_restricted_exec(tree, filename=filename, policy=policy)
    except (RecursionError, MemoryError) as exc:
        return CompileFailure("syntax", f"{type(exc).__name__} while compiling", None)
    except Exception as exc:  # noqa: BLE001 - the policy itself failed on odd input: refuse
        return CompileFailure("forbidden", "the compile policy could not process this program "
                              f"({type(exc).__name__}: {exc})", None)
    except SyntaxError as exc:
        return CompileFailure("syntax", f"SyntaxError: {exc.msg}",
                              exc.lineno)
    if result.errors:
        first = result.errors[0]
        match = _LINE.search(first)
        line = int(match.group(1)) if match else None
        message = "; ".join(result.errors[:3])
        if first.startswith("Line") and "SyntaxError" in first:
            return CompileFailure("syntax", message, line)
        return CompileFailure("forbidden", message, line)
    return result.code
