"""The text that represents an environment for embedding, and its structural fingerprint.

Environment programs that differ only by renamed identifiers, reordered methods or other numeric
constants should look the same; programs that do different things should not. ``canonical_source``
rewrites a program so that those surface changes vanish (identifiers renamed by first use, methods
in a fixed order, numbers and strings masked); the representations below mix that with the task
text the program shows the agent (its string literals) and its description. Which one is the
default was decided by measurement on ``tests/envmemory/data`` (see ``docs/benchmarks.md``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: Method names that the environment interfaces fix; they keep their names and lead the class body.
INTERFACE_METHODS: tuple[str, ...] = (
    "__init__", "reset", "step", "solution", "close", "render", "_check_answer",
    "_get_instructions",
)
_KEEP_NAMES = frozenset(dir(builtins)) | {"self", "cls"}
_NUMBER = "0"
_STRING = "s"


@dataclass(frozen=True)
class EnvText:
    """What the representation functions read: the program source and its description."""

    source: str
    description: str = ""


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """``tree`` and every statement in it, parents before their children (with the except
    handlers and match cases between): where docstrings, classes and imports can be. Expressions
    hold no statements, so this visits a fraction of what ``ast.walk`` does, and since each
    class is still reached before the classes inside it, sorting class bodies in this order
    gives what sorting them in ``ast.walk``'s order gives."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        nested = []
        for name in _STATEMENT_FIELDS:
            block = getattr(node, name, None)
            if isinstance(block, list):
                nested.extend(n for n in block if isinstance(n, _BLOCK_NODES))
        todo.extend(reversed(nested))


#: The fields that hold statements (``body``, ``orelse``, ...), except handlers and match cases.
_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
_BLOCK_NODES = (ast.stmt, ast.excepthandler, ast.match_case)


def _strip_docstrings(tree: ast.AST) -> None:
    for node in _statements(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]) and isinstance(
                node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = body[1:] or [ast.Pass()]


def _shape(node: ast.AST) -> str:
    """The node's structure with every name and constant masked: independent of naming."""
    text = ast.dump(node, annotate_fields=False, include_attributes=False)
    text = re.sub(r"'[^']*'", "_", text)
    return re.sub(r"Constant\([^()]*\)", "C", text)


def _sort_class_bodies(tree: ast.Module) -> None:
    """Interface methods first in a fixed order, then other statements by shape, so that
    reordering methods does not change the canonical text."""
    order = {name: i for i, name in enumerate(INTERFACE_METHODS)}

    def key(stmt: ast.stmt) -> tuple[int, str]:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in order:
            return (order[stmt.name], "")
        return (len(order), _shape(stmt))

    for node in _statements(tree):
        if isinstance(node, ast.ClassDef):
            node.body = sorted(node.body, key=key)
    tree.body = sorted(tree.body, key=lambda s: (0 if isinstance(s, (ast.Import, ast.ImportFrom))
                                                 else 1, _shape(s) if not isinstance(
                                                     s, ast.ClassDef) else "~"))


class _Renamer(ast.NodeTransformer):
    """Renames user identifiers (locals, arguments, functions, classes, ``self`` attributes) to
    ``v0, v1, ...`` by first use; keeps builtins, imported modules and interface method names."""

    def __init__(self, keep: set[str], mask_literals: bool) -> None:
        self.keep = keep
        self.mask_literals = mask_literals
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        if name in self.keep or name in INTERFACE_METHODS or (
                name.startswith("__") and name.endswith("__")):
            return name
        if name not in self.names:
            self.names[name] = f"v{len(self.names)}"
        return self.names[name]

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._new(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = "Env" if node.name.endswith("Env") else self._new(node.name)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            node.attr = self._new(node.attr)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if not self.mask_literals:
            return node
        if isinstance(node.value, bool) or node.value is None:
            return node
        if isinstance(node.value, (int, float, complex)):
            return ast.copy_location(ast.Constant(value=0), node)
        if isinstance(node.value, (str, bytes)):
            return ast.copy_location(ast.Constant(value=_STRING), node)
        return node


def _imported_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def _collapse(source: str) -> str:
    return re.sub(r"\s+", " ", source).strip()


def _ordered_tree(source: str) -> ast.Module | None:
    """The program's AST with docstrings dropped and methods sorted (names as written)."""
    tree = _parse(source)
    if tree is None:
        return None
    _strip_docstrings(tree)
    _sort_class_bodies(tree)
    return tree


def canonical_tree(source: str, mask_literals: bool = True) -> ast.Module | None:
    """The program's AST with docstrings dropped, methods sorted and identifiers renamed."""
    tree = _ordered_tree(source)
    if tree is None:
        return None
    return _rename(tree, mask_literals)


def _rename(tree: ast.Module, mask_literals: bool) -> ast.Module:
    keep = set(_KEEP_NAMES) | _imported_names(tree)
    return _Renamer(keep, mask_literals).visit(tree)


def _unparse(tree: ast.Module, source: str) -> str:
    try:
        return ast.unparse(tree)
    except (ValueError, RecursionError):
        return _collapse(source)


def canonical_source(source: str, mask_literals: bool = True) -> str:
    """Source rewritten so renames, method order and (when masked) literal values do not show;
    whitespace-collapsed source for programs that do not parse."""
    if mask_literals:
        return _masked_canonical(source)
    tree = canonical_tree(source, mask_literals)
    return _collapse(source) if tree is None else _unparse(tree, source)


@functools.lru_cache(maxsize=4096)
def _masked_canonical(source: str) -> str:
    """:func:`canonical_source` with literals masked, cached per source (the fingerprint, and
    the representations that embed canonical code, ask for it)."""
    tree = canonical_tree(source, True)
    return _collapse(source) if tree is None else _unparse(tree, source)


@functools.lru_cache(maxsize=4096)
def _ordered_strings(source: str) -> tuple[str, ...] | None:
    """The program's string constants, whitespace collapsed, in canonical method order
    (``None`` when it does not parse). Cached: the loop asks for a program's text to embed at
    dedupe and again when it is added. The renaming and unparsing of the canonical source are
    not needed for them (a third of the cost), and run only when something asks for it."""
    tree = _ordered_tree(source)
    if tree is None:
        return None
    return tuple(" ".join(node.value.split()) for node in _walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str))


def _walk(tree: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` (breadth first, children in field order), without its per-node generators."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, ast.AST))
        yield node


@functools.lru_cache(maxsize=4096)
def fingerprint(source: str) -> str:
    """sha256 (16 hex digits) of the canonical source with literals masked: equal for programs
    that differ only in names, method order, numbers and strings. Cached per source: the loop
    asks again for the same program (dedupe, then add)."""
    return hashlib.sha256(canonical_source(source).encode("utf-8")).hexdigest()[:16]


def string_literals(source: str, min_length: int = 3) -> list[str]:
    """The program's text for the agent: its string literals (f-string parts included) in
    canonical method order, without repeats; one-word keys and format snippets dropped."""
    strings = _ordered_strings(source)
    if strings is None:
        return re.findall(r"[\"']([^\"'\n]{%d,})[\"']" % min_length, source)
    seen = dict.fromkeys(text for text in strings if len(text) >= min_length and " " in text)
    return list(seen)


def _description(env: EnvText) -> str:
    return env.description.strip() or " ".join(string_literals(env.source)[:3])


def _strings(env: EnvText) -> str:
    return "\n".join(string_literals(env.source)) or _collapse(env.source)


def _code(env: EnvText) -> str:
    return env.source


def _normalized_code(env: EnvText) -> str:
    return canonical_source(env.source)


def _mix(env: EnvText) -> str:
    parts = [env.description.strip(), _strings(env), canonical_source(env.source)]
    return "\n".join(p for p in parts if p)


def _task(env: EnvText) -> str:
    parts = [env.description.strip(), _strings(env)]
    return "\n".join(p for p in parts if p)


#: Representation name -> function building the text to embed.
REPRESENTATIONS: dict[str, Callable[[EnvText], str]] = {
    "description": _description,
    "strings": _strings,
    "task": _task,
    "code": _code,
    "normalized_code": _normalized_code,
    "mix": _mix,
}

#: The default, chosen by the measurement in ``docs/benchmarks.md``.
DEFAULT_REPRESENTATION = "task"


def env_text(source: str, description: str = "", representation: str = DEFAULT_REPRESENTATION
             ) -> str:
    """The text that represents one environment under ``representation``."""
    try:
        build = REPRESENTATIONS[representation]
    except KeyError:
        raise ValueError(f"unknown text representation {representation!r}; "
                         f"choose one of {', '.join(REPRESENTATIONS)}") from None
    return build(EnvText(source=source, description=description))
