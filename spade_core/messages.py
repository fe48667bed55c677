"""Small helpers for the messages commands print to people."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count with its noun in the right number: ``1 environment``, ``2 environments``
    (``many``: the plural when it is not ``noun + "s"``)."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def size_text(size: int) -> str:
    """``size`` bytes for a person: ``512 bytes``, ``2.5 KB``, ``1.2 GB`` (powers of 1000)."""
    if size < 1000:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1000
        if value < 1000:
            return f"{value:.1f} {unit}"
    return f"{value / 1000:.1f} TB"


_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)]
            if chr(code) not in "\n\t"}


def printable(text: str) -> str:
    """``text`` with its control characters (C0 but newline and tab, DEL, C1) written as
    ``\\xNN`` escapes: text a program or a model wrote, shown on a terminal, can then not move
    the cursor, clear the screen, retitle the terminal or hide what follows."""
    return text.translate(_CONTROL)


#: DEL and the C1 control characters, which ``json.dumps(..., ensure_ascii=False)`` leaves raw.
_JSON_CONTROL = {code: f"\\u{code:04x}" for code in [0x7F, *range(0x80, 0xA0)]}


def json_line(value: object) -> str:
    """``value`` as one line of JSON for a terminal or a pipe: UTF-8 text kept readable, every
    control character escaped (``json.dumps`` escapes C0 itself; DEL and C1, which a terminal may
    act on, only appear inside strings and are escaped here as ``\\u00XX``)."""
    import json

    return json.dumps(value, ensure_ascii=False).translate(_JSON_CONTROL)
