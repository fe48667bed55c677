"""Nearest neighbours of the report's environments in the run's environment memory.

The memory is opened through the memory component the run's config names, read-only
(:func:`spade_core.run_memory.open_run_memory`: safe while the run writes it), and reached only
through the ``EnvMemory`` interface: ``stats()`` for the counts, ``get()`` for each environment's
stored record and ``search_many()`` with those records, which ranks by their stored vectors, so no
embedding model is loaded. A memory plugin that is not installed, or no memory yet, becomes a line
in the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Neighbour:
    """A stored environment close to one of the report's environments."""

    id: str
    similarity: float
    status: str
    family: str
    description: str
    regret: float | None


@dataclass
class MemoryView:
    """What the report shows about the memory: where it is, its counts, and the neighbours."""

    #: Where the memory is (its ``stats()["folder"]``, else a label); ``None`` when unavailable.
    folder: str | None
    counts: dict[str, Any] = field(default_factory=dict)
    neighbours: dict[str, list[Neighbour]] = field(default_factory=dict)
    embedded: int = 0
    error: str | None = None


def _unavailable(exc: Exception) -> str:
    """One line saying why the run's memory cannot be read."""
    cause = exc.__cause__
    if isinstance(cause, FileNotFoundError):  # the component found no memory to read
        return f"{cause} (the run has not created its memory yet)"
    return f"the run's environment memory is unavailable: {exc}"


def find_neighbours(run_dir: Path, config: dict[str, Any], env_ids: list[str],
                    k: int = 5) -> MemoryView:
    """Up to ``k`` nearest stored environments for each id in ``env_ids`` that has a vector."""
    from spade_core.run_memory import open_run_memory

    try:
        memory = open_run_memory(run_dir, config)
    except Exception as exc:  # noqa: BLE001 - a missing plugin or memory is a line in the report
        return MemoryView(folder=None, error=_unavailable(exc))
    view = MemoryView(folder="the run's memory")
    try:
        view.counts = memory.stats()
        view.folder = str(view.counts.get("folder") or view.folder)
        if k <= 0:
            return view
        records = [r for r in (memory.get(env_id) for env_id in env_ids)
                   if r is not None and r.embedding]
        view.embedded = len(records)
        for record, hits in zip(records, memory.search_many(records, k), strict=True):
            view.neighbours[record.id] = [
                Neighbour(id=other.id, similarity=similarity, status=other.status,
                          family=other.family, description=other.description,
                          regret=other.stats.get("regret"))
                for other, similarity in hits]
    except Exception as exc:  # noqa: BLE001 - a memory being written must not break the report
        view.error = f"reading the memory at {view.folder} failed: {type(exc).__name__}: {exc}"
    finally:
        memory.close()
    return view
