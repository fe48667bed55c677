"""Nearest neighbours of the report's environments in the run's environment memory.

Reads the built-in memory (``envmemory``: SQLite records with stored embeddings) read-only, which
is safe while a run writes it, and ranks every stored record by cosine similarity to each
environment's own stored vector: the same exact scan as ``spade memory search``, without loading
the embedding model.
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

    folder: Path | None
    counts: dict[str, Any] = field(default_factory=dict)
    neighbours: dict[str, list[Neighbour]] = field(default_factory=dict)
    embedded: int = 0
    error: str | None = None


def memory_folder(run_dir: Path, config: dict[str, Any]) -> Path:
    """The memory folder the run's config names (``memory.options.path``), else ``memory/``."""
    section = config.get("memory")
    options = section.get("options") if isinstance(section, dict) else None
    path = options.get("path") if isinstance(options, dict) else None
    folder = Path(str(path)).expanduser() if path else Path("memory")
    return folder if folder.is_absolute() else run_dir / folder


def _top_k(query_ids: list[str], queries: Any, store: Any, k: int) -> dict[str, list[tuple]]:
    """Best ``k`` (similarity, id) per query over every stored vector, the query itself excluded."""
    import numpy as np

    best: dict[str, list[tuple[float, str]]] = {q: [] for q in query_ids}
    for ids, vectors in store.embeddings():
        if vectors.shape[1] != queries.shape[1]:
            continue
        sims = queries @ vectors.T
        take = min(k + 1, len(ids))
        top = np.argpartition(-sims, take - 1, axis=1)[:, :take]
        for row, query_id in enumerate(query_ids):
            found = best[query_id]
            found.extend((float(sims[row, j]), ids[j]) for j in top[row] if ids[j] != query_id)
            found.sort(key=lambda pair: (-pair[0], pair[1]))
            del found[k:]
    return best


def find_neighbours(run_dir: Path, config: dict[str, Any], env_ids: list[str],
                    k: int = 5) -> MemoryView:
    """Up to ``k`` nearest stored environments for each id in ``env_ids`` that has a vector."""
    folder = memory_folder(run_dir, config)
    try:
        from envmemory.store import DB_NAME, RecordStore
    except ImportError as exc:
        return MemoryView(folder=None, error=f"the environment memory package is not "
                                             f"installed ({exc})")
    if not (folder / DB_NAME).is_file():
        return MemoryView(folder=None, error=f"no environment memory at {folder} (the run's "
                          "memory plugin keeps none there, or the run has not created it yet)")
    import numpy as np

    view = MemoryView(folder=folder)
    try:
        store = RecordStore(folder, readonly=True)
    except Exception as exc:  # noqa: BLE001 - sqlite errors become a line in the report
        view.error = f"cannot open the memory at {folder}: {exc}"
        return view
    try:
        view.counts = store.counts()
        if k <= 0:
            return view
        query_ids, rows = [], []
        for env_id in env_ids:
            record = store.get(env_id)
            if record is not None and record.embedding:
                query_ids.append(env_id)
                rows.append(np.asarray(record.embedding, dtype=np.float32))
        view.embedded = len(query_ids)
        if not rows or len({len(r) for r in rows}) != 1:
            return view
        queries = np.stack(rows)
        chunk = 256  # bounds the similarity matrix at 256 x 50,000 floats per batch
        best: dict[str, list[tuple[float, str]]] = {}
        for start in range(0, len(query_ids), chunk):
            best.update(_top_k(query_ids[start:start + chunk], queries[start:start + chunk],
                               store, k))
        records: dict[str, Any] = {}
        for pairs in best.values():
            for _, other in pairs:
                if other not in records:
                    records[other] = store.get(other)
        for query_id, pairs in best.items():
            view.neighbours[query_id] = [
                Neighbour(id=other, similarity=sim, status=records[other].status,
                          family=records[other].family,
                          description=records[other].description,
                          regret=records[other].stats.get("regret"))
                for sim, other in pairs if records.get(other) is not None]
    except Exception as exc:  # noqa: BLE001 - a memory being written must not break the report
        view.error = f"reading the memory at {folder} failed: {type(exc).__name__}: {exc}"
    finally:
        store.close()
    return view
