"""Small helpers for the messages commands print to people."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count with its noun in the right number: ``1 environment``, ``2 environments``
    (``many``: the plural when it is not ``noun + "s"``)."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"
