"""Reading text a model wrote (replies, tool calls, hints, programs) without letting its shape end
the process: nesting deeper than the interpreter's recursion limit (``RecursionError`` from
``json``/``ast``), integers past the int-from-string limit (``ValueError``), NUL and control
characters, lone surrogates (``UnicodeEncodeError`` once the text is encoded to UTF-8).

Each reader returns a value or raises one documented error: :func:`load_json` a ``ValueError``,
:func:`parse_python` a ``SyntaxError``; :func:`valid_unicode` never raises. Parsers of untrusted
text use these rather than ``json.loads``/``ast.parse`` directly, so a hostile reply becomes a
wrong or invalid one and the run goes on (docs/sandbox.md, "Text a model writes").
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "PARSE_FAILURES", "load_json", "parse_python", "valid_unicode"]

#: What a parser of untrusted text may raise whatever the text: ``ValueError`` (with
#: ``UnicodeError`` and ``json.JSONDecodeError``), ``SyntaxError``, ``RecursionError``,
#: ``MemoryError`` and ``OverflowError``. Catch these, never a bare ``Exception``, around
#: library code that reads model text.
PARSE_FAILURES: tuple[type[BaseException], ...] = (ValueError, SyntaxError, RecursionError,
                                                   MemoryError, OverflowError)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """``text`` with every lone surrogate (a code point U+D800..U+DFFF, which UTF-8 cannot
    encode; an OpenAI-compatible server can send one as a JSON escape) replaced by U+FFFD. Text
    without any is returned as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


#: Deepest nesting of arrays and objects :func:`load_json` accepts: far beyond any real tool
#: call, and shallow enough that whatever later encodes or prints the value never recurses out.
MAX_JSON_DEPTH = 100


def load_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``; raises ``ValueError`` for anything that is not JSON this process can
    hold: malformed, nested deeper than ``max_depth`` (or the recursion limit), integers past the
    int-from-string limit."""
    try:
        value = json.loads(text)
    except ValueError:
        raise
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise ValueError(f"JSON not read: {type(exc).__name__}") from None
    if text.count("[") + text.count("{") > max_depth and _depth(value) > max_depth:
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    return value


def _depth(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (iterative: no recursion limit applies)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in
                         (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_python(text: str, mode: str = "exec", filename: str = "<unknown>") -> ast.AST:
    """``ast.parse(text, filename, mode)``; raises ``SyntaxError`` for anything that does not give
    a syntax tree: bad syntax, NUL bytes, lone surrogates, nesting past the parser's or the
    recursion limit, integers past the int-from-string limit."""
    try:
        return ast.parse(text, filename, mode)
    except SyntaxError:
        raise
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        reason = {RecursionError: "nested too deep", MemoryError: "too large"}.get(
            type(exc), str(exc).split("\n")[0][:200])
        raise SyntaxError(f"text not parsed: {type(exc).__name__}: {reason}") from None
