"""Export formats: how ``spade envs export --format NAME`` writes a run's environments (rows
with the program, its family and its statistics) for another tool to load."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any


class ExportFormat(ABC):
    """One format of ``spade envs export``. Required: :meth:`write`."""

    @abstractmethod
    def write(self, rows: list[dict[str, Any]], out: Path, *, sandbox: str) -> None:
        """Write ``rows`` (``id``, ``family``, ``status``, ``description``, ``hint``, ``skill``,
        ``level``, ``source``, the family's agent ``instructions`` and ``stats`` as JSON text)
        into the empty folder ``out``. ``sandbox`` names the sandbox plugin that written code must play programs
        through (programs are untrusted); a format that writes only data ignores it."""

    def close(self) -> None:
        """Release what the format holds; the default holds nothing."""

