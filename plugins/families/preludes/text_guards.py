"""Guards for trusted library code that interprets text, installed inside a sandbox worker.

Trusted prelude source (run unrestricted in the worker, before the family's own prelude) and an
importable module for tests. RestrictedPython's guards only cover the program's own source: a
library function the program calls (a reasoning-gym scorer, math-verify, sympy) compiles and runs
text with real builtins. Several do so with text the program or the agent controls:
``string_insertion`` and ``spiral_matrix`` ``eval()`` the agent's answer, ``basic_arithmetic``
``eval()`` an expression built from the program's ``config``, and ``sympy.parse_expr`` (behind
``sympify``, ``countdown``, ``puzzle24``, the integration datasets and math-verify) ``eval()`` s
Python built from any string, with every builtin function in its namespace. So, in the worker's
memory (never on disk):

- every module of the guarded packages gets a module-level ``eval`` that evaluates literals and
  arithmetic only (:func:`literal_arithmetic`), shadowing the builtin for that module alone:
  those already imported when the guards are installed, and (through an import hook first on
  ``sys.meta_path``) those imported later, before their code runs;
- ``sympy.parsing.sympy_parser.parse_expr``, and every reference to it that a loaded module holds,
  becomes :func:`guarded_parse_expr`, which refuses text whose translated Python uses anything but
  numbers, sympy symbols, sympy's mathematical functions and classes, and arithmetic.

The OS layer still contains whatever these guards miss. ``docs/sandbox.md`` ("Trusted code that
interprets text") lists every call site and how it is held.
"""

import ast as _ast
import sys as _sys

# Composed before other preludes, it exports nothing of its own.
__all__ = list(globals().get("__all__", []))

#: Packages whose modules get the literal-only ``eval`` (those loaded when the guards are
#: installed, and those imported later through the import hook).
_GUARDED_PACKAGES = ("reasoning_gym", "math_verify", "latex2sympy2_extended")
#: Largest exponent or shift ``literal_arithmetic`` computes (``9**9**9`` would run for hours).
_MAX_EXPONENT = 4096
#: Longest text either guard accepts.
_MAX_TEXT = 20000
#: Sympy callables a formula may use besides its classes: plain functions that build expressions.
_SYMPY_FUNCTIONS = frozenset({"sqrt", "root", "cbrt", "real_root", "Max", "Min", "abs"})
#: Callables whose first argument may be a string literal (the parser writes ``Symbol('x')``).
_STRING_TAKERS = frozenset({"Symbol", "Function", "Float", "Integer", "Rational"})


class TextGuardError(ValueError):
    """Text a guard refused; a ``ValueError``, which scorers already treat as a wrong answer."""


_BINARY = {
    _ast.Add: lambda a, b: a + b, _ast.Sub: lambda a, b: a - b, _ast.Mult: lambda a, b: a * b,
    _ast.Div: lambda a, b: a / b, _ast.FloorDiv: lambda a, b: a // b,
    _ast.Mod: lambda a, b: a % b, _ast.BitAnd: lambda a, b: a & b,
    _ast.BitOr: lambda a, b: a | b, _ast.BitXor: lambda a, b: a ^ b,
}
_UNARY = {_ast.UAdd: lambda a: +a, _ast.USub: lambda a: -a, _ast.Invert: lambda a: ~a,
          _ast.Not: lambda a: not a}
_COMPARE = {_ast.Eq: lambda a, b: a == b, _ast.NotEq: lambda a, b: a != b,
            _ast.Lt: lambda a, b: a < b, _ast.LtE: lambda a, b: a <= b,
            _ast.Gt: lambda a, b: a > b, _ast.GtE: lambda a, b: a >= b}
_NAMED_CONSTANTS = {"True": True, "False": False, "None": None}


def _bounded(value, what):
    if isinstance(value, int) and abs(value) > _MAX_EXPONENT:
        raise TextGuardError(f"{what} {value} is too large to compute")
    return value


def _literal(node):
    """The value of one node of a literal or arithmetic expression; anything else is refused."""
    if isinstance(node, _ast.Constant):
        return node.value
    if isinstance(node, _ast.Name) and node.id in _NAMED_CONSTANTS:
        return _NAMED_CONSTANTS[node.id]
    if isinstance(node, (_ast.List, _ast.Tuple, _ast.Set)):
        values = [_literal(e) for e in node.elts]
        return {_ast.List: list, _ast.Tuple: tuple, _ast.Set: set}[type(node)](values)
    if isinstance(node, _ast.Dict) and None not in node.keys:
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, _ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_literal(node.operand))
    if isinstance(node, _ast.BinOp):
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(node.op, _ast.Pow):
            return left ** _bounded(right, "exponent")
        if isinstance(node.op, _ast.LShift):
            return left << _bounded(right, "shift")
        if isinstance(node.op, _ast.RShift):
            return left >> right
        if type(node.op) in _BINARY:
            return _BINARY[type(node.op)](left, right)
    if isinstance(node, _ast.BoolOp):
        values = [_literal(v) for v in node.values]
        result = values[0]
        for value in values[1:]:
            result = (result and value) if isinstance(node.op, _ast.And) else (result or value)
        return result
    if isinstance(node, _ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _literal(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = _literal(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise TextGuardError(f"only literals and arithmetic are evaluated here, not "
                         f"{type(node).__name__}")


def literal_arithmetic(source, globals=None, locals=None):  # noqa: A002 - eval's signature
    """``eval`` for text: Python literals (numbers, strings, lists, tuples, sets, dicts, True,
    False, None) combined with arithmetic, bitwise, boolean and comparison operators. Names,
    calls, attributes, subscripts and everything else raise :class:`TextGuardError`; so do
    exponents and shifts above 4096. Code objects are refused too."""
    if not isinstance(source, str):
        raise TextGuardError("only text is evaluated here, not a code object")
    if len(source) > _MAX_TEXT:
        raise TextGuardError(f"text of {len(source)} characters is too long to evaluate")
    try:
        tree = _ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise TextGuardError(f"not an expression: {exc}") from None
    return _literal(tree.body)


literal_arithmetic.spade_replaces = "eval"


def _formula_problem(code, names):
    """Why the Python that sympy made of a formula is refused (``None``: accepted). ``names`` maps
    each name the code may use to whether it is a callable building expressions."""
    try:
        tree = _ast.parse(code, mode="eval")
    except (SyntaxError, ValueError):
        return None  # sympy raises its own error for it
    call_arguments = set()  # ast.walk goes breadth first: a call is seen before its arguments
    for node in _ast.walk(tree):
        if isinstance(node, (_ast.Expression, _ast.BinOp, _ast.UnaryOp, _ast.BoolOp,
                             _ast.Compare, _ast.Tuple, _ast.List, _ast.operator,
                             _ast.unaryop, _ast.boolop, _ast.cmpop, _ast.expr_context,
                             _ast.keyword)):
            continue
        if isinstance(node, _ast.Constant):
            if isinstance(node.value, (int, float, complex, bool)) or node.value is None:
                continue
            if isinstance(node.value, str):
                if id(node) not in call_arguments:
                    return "a string outside Symbol(...)"
                continue
            return "a constant of type " + type(node.value).__name__
        if isinstance(node, _ast.Name):
            if node.id.startswith("_") or node.id not in names:
                return f"the name {node.id!r}"
            continue
        if isinstance(node, _ast.Call):
            call_arguments.update(id(a) for a in node.args)
            func = node.func
            if isinstance(func, _ast.Call):
                continue  # Function('f')(x): the inner call is checked on its own
            if not isinstance(func, _ast.Name) or not names.get(func.id):
                return "a call of " + (func.id if isinstance(func, _ast.Name)
                                       else type(func).__name__)
            strings = [a for a in node.args if isinstance(a, _ast.Constant)
                       and isinstance(a.value, str)]
            if strings and (func.id not in _STRING_TAKERS or len(node.args) != 1
                            or node.keywords):
                return f"a string argument to {func.id}"
            continue
        return "Python syntax " + type(node).__name__
    return None


def _global_names(global_dict):
    """Of a formula's namespace, the names it may use, each mapped to whether it is a callable
    that builds expressions: sympy classes and a few sympy functions are, sympy constants are
    names only; builtins and everything else are left out."""
    import sympy

    allowed = {}
    for name, value in global_dict.items():
        if name.startswith("_"):
            continue
        if isinstance(value, type) and issubclass(value, sympy.Basic):
            allowed[name] = True
        elif isinstance(value, sympy.Basic):
            allowed[name] = False
        elif name in _SYMPY_FUNCTIONS and (value is abs or getattr(
                value, "__module__", "").startswith("sympy")):
            allowed[name] = True
    return allowed


def _allowed_names(global_names, local_dict):
    """``global_names`` (from :func:`_global_names`) plus the caller's own ``local_dict``
    entries (names only, but a sympy class stays callable) and the string-taking constructors
    the parser writes."""
    import sympy

    allowed = dict(global_names)
    for name, value in (local_dict or {}).items():
        if isinstance(name, str) and not name.startswith("_"):
            allowed[name] = isinstance(value, type) and issubclass(value, sympy.Basic)
    for name in _STRING_TAKERS:
        allowed.setdefault(name, True)
    return allowed


#: ``(namespace, its allowed names)`` of ``parse_expr`` without a ``global_dict``, built once.
_DEFAULT_NAMES = []


def _default_names():
    """The namespace ``parse_expr`` evaluates in when given none (everything of ``from sympy
    import *``, every builtin function, ``open``, ``__import__`` and ``eval`` among them, and
    ``max``/``min`` as sympy's ``Max``/``Min``), with its allowed names; built on first use."""
    if not _DEFAULT_NAMES:
        import builtins
        import types

        names = {}
        exec("from sympy import *", names)  # noqa: S102 - a fixed, trusted import, as sympy does
        for name, value in vars(builtins).items():
            if isinstance(value, types.BuiltinFunctionType):
                names[name] = value
        names["max"], names["min"] = names["Max"], names["Min"]
        _DEFAULT_NAMES.append((names, _global_names(names)))
    return _DEFAULT_NAMES[0]


def _make_guarded(original):
    """``parse_expr`` that checks the Python sympy would ``eval`` before handing it over."""
    from sympy.parsing import sympy_parser

    def guarded_parse_expr(s, local_dict=None, transformations=sympy_parser.standard_transformations,
                           global_dict=None, evaluate=True):
        """sympy's ``parse_expr``, for formulas only: see the module docstring."""
        if not isinstance(s, str):
            raise TextGuardError("parse_expr takes text")
        if len(s) > _MAX_TEXT:
            raise TextGuardError(f"formula of {len(s)} characters is too long to parse")
        if global_dict is None:
            names_from, global_names = _default_names()
        else:
            names_from, global_names = global_dict, _global_names(global_dict)
        if isinstance(transformations, str):
            if transformations == "all":
                chosen = sympy_parser.T[:]
            elif transformations == "implicit":
                chosen = sympy_parser.T[:6]
            else:
                raise ValueError("unknown transformation group name")
        else:
            chosen = transformations
        try:
            code = sympy_parser.stringify_expr(s, dict(local_dict or {}), dict(names_from),
                                               chosen)
        except Exception:  # noqa: BLE001 - let sympy report its own parse error
            return original(s, local_dict=local_dict, transformations=transformations,
                            global_dict=global_dict, evaluate=evaluate)
        problem = _formula_problem(code, _allowed_names(global_names, local_dict))
        if problem is not None:
            raise TextGuardError(f"refused to parse a formula using {problem}")
        return original(s, local_dict=local_dict, transformations=transformations,
                        global_dict=global_dict, evaluate=evaluate)

    guarded_parse_expr.spade_guarded = True
    guarded_parse_expr.__wrapped__ = original
    return guarded_parse_expr


_SYMPY_PARSER = "sympy.parsing.sympy_parser"


def _guard_parse_expr():
    """Rebind ``parse_expr`` to the guarded one in sympy's parser module and in every loaded
    module holding a reference to it (nothing when the parser is not loaded yet)."""
    parser = _sys.modules.get(_SYMPY_PARSER)
    if parser is None or getattr(parser.parse_expr, "spade_guarded", False):
        return
    original = parser.parse_expr
    guarded = _make_guarded(original)
    for module in list(_sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for key, value in list(namespace.items()):
            if value is original:
                namespace[key] = guarded


class _GuardingLoader:
    """Wraps a module's loader: a module of a guarded package gets the literal-only ``eval``
    before its code runs (its own ``def eval`` would still win), and sympy's parser gets its
    guard as soon as it has run. Every other attribute is the wrapped loader's (resources)."""

    def __init__(self, loader):
        self._spade_loader = loader

    def __getattr__(self, name):
        return getattr(self._spade_loader, name)

    def create_module(self, spec):
        return self._spade_loader.create_module(spec)

    def exec_module(self, module):
        if module.__name__.split(".")[0] in _GUARDED_PACKAGES:
            module.__dict__.setdefault("eval", literal_arithmetic)
        self._spade_loader.exec_module(module)
        if module.__name__ == _SYMPY_PARSER:
            _guard_parse_expr()


class _GuardingFinder:
    """A ``sys.meta_path`` finder placed first: it finds nothing itself, but the modules of the
    guarded packages and sympy's parser that are imported after the guards are installed (a
    dataset module reasoning-gym imports lazily) come back with a :class:`_GuardingLoader`."""

    #: Marks every guarding finder, whichever execution of this file made it: a process that ran
    #: the prelude more than once (an in-process sandbox, a test) must not chain two of them,
    #: each asking the other forever.
    _spade_guarding_finder = True

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in _GUARDED_PACKAGES and name != _SYMPY_PARSER:
            return None
        for finder in _sys.meta_path:
            if (getattr(finder, "_spade_guarding_finder", False)
                    or not hasattr(finder, "find_spec")):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _GuardingLoader(spec.loader)
                return spec
        return None


def install_text_guards():
    """Install both guards in this process, once (later calls do nothing): on the modules
    already loaded, and through an import hook on those imported later."""
    if getattr(_sys, "_spade_text_guards", False):
        return
    _guard_parse_expr()
    for name, module in list(_sys.modules.items()):
        if name.split(".")[0] in _GUARDED_PACKAGES and module is not None:
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict) and "eval" not in namespace:
                namespace["eval"] = literal_arithmetic
    if not any(getattr(f, "_spade_guarding_finder", False) for f in _sys.meta_path):
        _sys.meta_path.insert(0, _GuardingFinder())
    _sys._spade_text_guards = True


if __name__ == "__prelude__":  # run as a worker's prelude, not imported by a test
    install_text_guards()
