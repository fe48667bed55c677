"""What every family needs to know about a program's shape: which class is the environment, and
cheap static checks (parse, class naming, required methods) done on the AST before any sandbox
work. Nothing here executes the program."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spade_core.untrusted_text import PARSE_FAILURES, parse_python
from spade_core.validation import Invalid, env_class

#: Methods every environment class must have, directly or through a base class.
REQUIRED_METHODS: tuple[str, ...] = ("reset", "step")


@dataclass(frozen=True)
class ProgramShape:
    """The environment classes a program defines, read from its AST."""

    env_classes: tuple[str, ...]
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    methods: dict[str, tuple[str, ...]] = field(default_factory=dict)
    imports: tuple[str, ...] = ()


def program_shape(source: str) -> ProgramShape:
    """Parse ``source`` and describe its top-level ``*Env`` classes. Raises ``SyntaxError`` for
    any text that is not a program this process can read (bad syntax, nesting too deep, NUL
    bytes, lone surrogates, huge literals), and for nothing else."""
    tree = parse_python(source)
    try:
        return _shape(tree)
    except PARSE_FAILURES as exc:  # a base expression too deep to unparse, ...
        raise SyntaxError(f"program not read: {type(exc).__name__}") from None


def _shape(tree: ast.Module) -> ProgramShape:
    classes, bases, methods, imports = [], {}, {}, []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.endswith("Env"):
            classes.append(node.name)
            bases[node.name] = tuple(ast.unparse(b) for b in node.bases)
            methods[node.name] = tuple(n.name for n in node.body
                                       if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imports.append(node.module)
    return ProgramShape(tuple(classes), bases, methods, tuple(imports))


def leaf_env_classes(shape: ProgramShape) -> list[str]:
    """The ``*Env`` classes no other ``*Env`` class of the program derives from: a program may
    define a helper base, but exactly one leaf is the environment."""
    derived_from = {base for name in shape.env_classes for base in shape.bases.get(name, ())}
    return [name for name in shape.env_classes if name not in derived_from]


def static_problems(source: str, *, base_classes: Mapping[str, Iterable[str]] | None = None,
                    ) -> list[str]:
    """What is wrong with the program's shape, as messages that say what would be right.

    ``base_classes`` maps an injected base class name (``ToolUseBaseEnv``) to the methods it
    provides, so subclasses need not define them.
    """
    try:
        shape = program_shape(source)
    except SyntaxError as exc:
        return [(f"line {exc.lineno}: " if exc.lineno else "") + f"syntax error: {exc.msg}"]
    provided = {name: set(methods) for name, methods in (base_classes or {}).items()}
    candidates = [c for c in leaf_env_classes(shape) if c not in provided]
    if not candidates:
        return ["no environment class: define exactly one top-level class whose name ends "
                "in 'Env'"]
    if len(candidates) > 1:
        return [f"several environment classes ({', '.join(candidates)}): define exactly one "
                "class whose name ends in 'Env' (helpers may be bases of it)"]
    name = candidates[0]
    available: set[str] = set()
    stack, seen = [name], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        available.update(shape.methods.get(current, ()))
        for base in shape.bases.get(current, ()):
            available.update(provided.get(base, ()))
            stack.append(base)
    missing = [m for m in REQUIRED_METHODS + ("solution",) if m not in available]
    if missing:
        return [f"class {name} lacks {', '.join(missing)}(): an environment needs reset(seed=None)"
                ", step(action) and solution()"]
    return []


def find_env_class(namespace: Mapping[str, Any], injected: Iterable[str] = ()) -> type:
    """The environment class among the names a program defined (``namespace`` after running it),
    leaving out injected names (the rule is :func:`spade_core.validation.env_class`); raises
    ``LookupError`` saying what was found instead."""
    skip = set(injected)
    classes = {name: obj for name, obj in namespace.items()
               if isinstance(obj, type) and name not in skip}
    try:
        return env_class(classes)
    except Invalid as exc:
        raise LookupError(str(exc)) from None
