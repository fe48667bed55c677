"""Environment program files: read programs from a folder of ``.py`` files or a JSONL file, and
list the families a program may belong to (``spade check-env``, ``spade envs import`` and fixed
pools share these)."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from spade_core.interfaces.family import EnvFamily
from spade_core.untrusted_text import load_json, valid_unicode

#: JSONL fields that may hold a program's source, tried in this order.
CODE_FIELDS: tuple[str, ...] = ("code", "source", "program", "env_code", "game_code",
                                "environment", "env")
DESCRIPTION_FIELDS: tuple[str, ...] = ("description", "name", "title", "skill", "game_name")


def read_programs(path: Path, field: str | None = None, command: str = "envs import"
                  ) -> Iterator[tuple[str, str | None, str]]:
    """``(label, source or None when unreadable, description)`` for each program under ``path``:
    every ``*.py`` file of a folder (sorted; package ``__init__.py`` files are no programs), or
    every line of a ``.jsonl`` file. ``command`` starts the error messages."""
    from spade_core.errors import UsageError

    if path.is_dir():
        for file in sorted(p for p in path.rglob("*.py")
                           if p.is_file() and p.name != "__init__.py"):
            try:
                yield str(file), file.read_text(encoding="utf-8"), ""
            except UnicodeDecodeError:
                yield str(file), None, ""
        return
    if not path.is_file():
        raise UsageError(f"{command}: {path}: no such file or folder")
    if path.suffix == ".py":
        yield str(path), path.read_text(encoding="utf-8", errors="replace"), ""
        return
    fields = (field,) if field else CODE_FIELDS
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            label = f"{path}:{number}"
            try:
                row = load_json(line)
            except ValueError as exc:  # malformed, nested too deep, huge integers
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                raise UsageError(f"{command}: {label}: not JSON ({reason}); expected one JSON "
                                 "object per line") from None
            code = next((row[f] for f in fields if isinstance(row, dict)
                         and isinstance(row.get(f), str)), None)
            if code is None:
                raise UsageError(f"{command}: {label}: no code field (looked for "
                                 f"{', '.join(fields)}); name it with --field")
            description = next((str(row[f]) for f in DESCRIPTION_FIELDS if row.get(f)), "")
            # JSON escapes can hold lone surrogates, which no file or hash can encode
            yield label, valid_unicode(code), valid_unicode(description)


def choose_family(source: str, families: Sequence[EnvFamily]
                  ) -> tuple[EnvFamily | None, list[str]]:
    """The first family whose static checks accept ``source`` (a family's default checks accept
    everything), or ``None`` with every family's problems."""
    problems: list[str] = []
    for family in families:
        found = family.static_problems(source)
        if not found:
            return family, []
        problems.append(f"{family.name}: {found[0]}")
    return None, problems


#: Verdict categories that another family's prelude, modules, probe actions or solution format
#: can change (an import only a family provides, a solution only its format replays); a program
#: with any other verdict (syntax, timeout, memory, crash, ...) is not checked again elsewhere.
FAMILY_DEPENDENT = frozenset({"forbidden", "interface", "runtime_error", "endless", "unsolvable",
                              "trivial"})


def family_for(source: str, families: Sequence[EnvFamily]
               ) -> tuple[EnvFamily | None, str | None]:
    """The family ``open_env`` checks a program in: the first of :func:`family_candidates`;
    ``(None, None)`` for a self-contained program (the plain SPADE game format);
    ``(None, problem)`` when the families whose names it uses all refuse it."""
    candidates, problem = family_candidates(source, families)
    return (candidates[0] if candidates else None), problem


def family_candidates(source: str, families: Sequence[EnvFamily]
                      ) -> tuple[list[EnvFamily | None], str | None]:
    """The families ``spade check-env`` tries a program in, in order, until one makes it valid:
    among ``families``, the ones whose injected names (``ToolUseBaseEnv``, ``extract_boxed``,
    ...) it uses, most used first, that accept it statically; for a self-contained program the
    plain SPADE game format (``None``) and then every family that accepts it (a program may
    import a module only a family provides, as ``math_verify``, or give its solution in a
    family's format). ``([], problem)`` when the families it needs all refuse it."""
    needed = families_needed(source, families)
    if not needed:
        return [None, *(f for f in families if not f.static_problems(source))], None
    accepted: list[EnvFamily | None] = [f for f in needed if not f.static_problems(source)]
    if accepted:
        return accepted, None
    _, problems = choose_family(source, needed)
    used = " and ".join(f"family {f.name!r}" for f in needed)
    return [], (f"it uses names injected by {used}, which does not accept it: "
                + "; ".join(problems))


def _free_names(source: str) -> set[str]:
    """Names a program reads but never binds itself (a parse failure gives none)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound


def installed_families(registry: Any = None, where: str = "families", context: Any = None,
                       on_skip: Callable[[str, Exception], None] | None = None
                       ) -> dict[str, EnvFamily]:
    """Every installed env family built with its default options, by registered name (of
    ``registry``, by default that of every plugin ``SPADE_PLUGINS`` allows). One that cannot
    start (an optional family whose library is not installed) is left out and reported to
    ``on_skip(name, error)``; the caller closes the families. ``where`` names the caller in
    error messages."""
    from spade_core.errors import SpadeError

    if registry is None:
        from spade_core.plugins import load_plugins

        registry = load_plugins().registry
    families: dict[str, EnvFamily] = {}
    for name in registry.names("env_family"):
        try:
            families[name] = registry.build("env_family", name, {}, where, context)
        except SpadeError as exc:
            if on_skip is not None:
                on_skip(name, exc)
    return families


def families_needed(source: str, families: Sequence[EnvFamily]) -> list[EnvFamily]:
    """The families whose injected names (``ToolUseBaseEnv``, ``extract_boxed``, ...) the
    program uses without defining them, most names used first; empty for a self-contained
    program (the plain SPADE game format)."""
    free = _free_names(source)
    scored = [(len(free & set(f.injected_names)), i, f) for i, f in enumerate(families)]
    return [f for used, _, f in sorted(scored, key=lambda t: (-t[0], t[1])) if used]
