"""The FAISS index over the dedupe index: exact while small, IVF past a size threshold.

Vectors are unit length, so inner product is cosine similarity. Below ``switch_size`` vectors the
index is an exact ``IndexFlatIP``; at ``switch_size`` it is rebuilt as an ``IndexIVFFlat``
trained on the vectors it holds, and retrained when it has grown ``retrain_growth`` times past the
size it was trained at (more lists for more vectors). IVF was chosen over HNSW by measurement: on
this 2-core machine HNSW needs about 60 s per 100k vectors to build, IVF about 5 s
(``docs/memory.md``).

Files are saved atomically: a fresh ``dedupe_index-<n>.faiss`` is written and fsynced, then the
manifest ``dedupe_index.json`` (checksum, size, watermark) is replaced with ``os.replace``; the
manifest is the commit point. ``IndexFiles.load`` verifies the manifest, the checksum and the
size against the store, adds the vectors that entered the index after the last save, and rebuilds
from the store otherwise.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spade_core.atomic_files import fsync_dir, write_atomic
from spade_core.disk_space import writing

MANIFEST = "dedupe_index.json"


def _faiss() -> Any:
    import faiss

    return faiss


def ivf_lists(n: int) -> int:
    """Number of IVF lists for ``n`` vectors: the power of two nearest 4·sqrt(n), at most n/39
    (FAISS wants 39 training points per list), 16 at least."""
    target = min(4 * math.sqrt(max(n, 1)), max(n, 1) / 39)
    return max(16, 2 ** round(math.log2(max(target, 1))))


#: Vectors an automatic ``nprobe`` aims to scan per query (measured: ~0.5 ms here at 1M).
SCAN_TARGET = 2000


def default_nprobe(nlist: int, ntotal: int) -> int:
    """Lists to search so that about :data:`SCAN_TARGET` vectors are scanned, at least 8: small
    indexes are searched more widely (cheap there), large ones stay fast."""
    per_list = max(ntotal, 1) / nlist
    return int(min(nlist, max(8, math.ceil(SCAN_TARGET / per_list))))


@dataclass
class IndexConfig:
    """How the index grows: sizes at which it switches and retrains, and IVF search width."""

    dim: int
    switch_size: int = 10_000
    retrain_growth: float = 4.0
    nprobe: int | None = None
    train_points_per_list: int = 40
    kmeans_iterations: int = 10


class DedupeIndex:
    """FAISS index of ``(index_id, vector)``; flat then IVF, switched automatically."""

    def __init__(self, config: IndexConfig) -> None:
        self.config = config
        faiss = _faiss()
        self.index: Any = faiss.IndexIDMap2(faiss.IndexFlatIP(config.dim))
        self.kind = "flat"
        self.trained_size = 0
        self.watermark = 0

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    def _all_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        faiss = _faiss()
        if self.kind == "flat":
            flat = faiss.downcast_index(self.index.index)
            vectors = faiss.rev_swig_ptr(flat.get_xb(), self.ntotal * self.config.dim)
            ids = faiss.vector_to_array(self.index.id_map)
            return ids.copy(), np.array(vectors, dtype=np.float32).reshape(self.ntotal, -1)
        invlists = self.index.invlists
        all_ids, all_vectors = [], []
        for list_no in range(self.index.nlist):
            size = invlists.list_size(list_no)
            if not size:
                continue
            ids = faiss.rev_swig_ptr(invlists.get_ids(list_no), size)
            codes = faiss.rev_swig_ptr(invlists.get_codes(list_no), size * self.config.dim * 4)
            all_ids.append(np.array(ids, dtype=np.int64))
            all_vectors.append(np.frombuffer(bytes(codes), dtype=np.float32).reshape(size, -1))
        if not all_ids:
            return np.zeros(0, np.int64), np.zeros((0, self.config.dim), np.float32)
        return np.concatenate(all_ids), np.concatenate(all_vectors)

    def _build_ivf(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        faiss = _faiss()
        n = len(ids)
        nlist = ivf_lists(n)
        quantizer = faiss.IndexFlatIP(self.config.dim)
        ivf = faiss.IndexIVFFlat(quantizer, self.config.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        sample = min(n, nlist * self.config.train_points_per_list)
        rng = np.random.default_rng(n)
        train = vectors if sample >= n else vectors[np.sort(rng.choice(n, sample, replace=False))]
        ivf.cp.max_points_per_centroid = self.config.train_points_per_list
        ivf.cp.min_points_per_centroid = 5
        ivf.cp.niter = self.config.kmeans_iterations
        ivf.train(np.ascontiguousarray(train))
        ivf.add_with_ids(np.ascontiguousarray(vectors), ids)
        ivf.nprobe = self.config.nprobe or default_nprobe(nlist, n)
        self.index = ivf
        self.kind = "ivf"
        self.trained_size = n

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors with their index ids; switches to (or retrains) IVF when due."""
        if len(ids) == 0:
            return
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape[1] != self.config.dim:
            raise ValueError(f"vector dimension {vectors.shape[1]} does not match the index "
                             f"dimension {self.config.dim}")
        self.index.add_with_ids(vectors, ids)
        self.watermark = max(self.watermark, int(ids.max()))
        if self.kind == "ivf" and self.config.nprobe is None:
            self.index.nprobe = default_nprobe(self.index.nlist, self.ntotal)
        n = self.ntotal
        due = (self.kind == "flat" and n >= self.config.switch_size) or (
            self.kind == "ivf" and n >= self.trained_size * self.config.retrain_growth)
        if due:
            self._build_ivf(*self._all_vectors())

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(similarities, index_ids)``, each ``(len(queries), k)``; missing hits have id -1."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        if self.ntotal == 0:
            return (np.full((len(queries), k), -np.inf, np.float32),
                    np.full((len(queries), k), -1, np.int64))
        return self.index.search(queries, k)

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"kind": self.kind, "ntotal": self.ntotal,
                                "watermark": self.watermark}
        if self.kind == "ivf":
            info |= {"nlist": int(self.index.nlist), "nprobe": int(self.index.nprobe),
                     "trained_size": self.trained_size}
        return info


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


class IndexFiles:
    """Saves and loads a :class:`DedupeIndex` in a folder, atomically and verified."""

    def __init__(self, folder: Path, embedder_name: str) -> None:
        self.folder = Path(folder)
        self.embedder_name = embedder_name

    def manifest(self) -> dict[str, Any] | None:
        try:
            return json.loads((self.folder / MANIFEST).read_text())
        except (OSError, ValueError):
            return None

    def save(self, dedupe: DedupeIndex) -> Path:
        """Write the index under a new name, then commit it by replacing the manifest."""
        faiss = _faiss()
        old = self.manifest()
        generation = int(old.get("generation", 0)) + 1 if old else 1
        name = f"dedupe_index-{generation}.faiss"
        path = self.folder / name
        tmp = path.with_name(name + ".tmp")
        with writing(path, "the environment memory's dedupe index"):
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                faiss.write_index(dedupe.index, str(tmp))
                with open(tmp, "rb+") as handle:
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                tmp.unlink(missing_ok=True)  # the manifest still names the previous index
                raise
            manifest = {"generation": generation, "file": name, "sha256": _sha256(path),
                        "bytes": path.stat().st_size, "embedder": self.embedder_name,
                        "dim": dedupe.config.dim, "trained_size": dedupe.trained_size,
                        **dedupe.describe()}
            write_atomic(self.folder / MANIFEST, json.dumps(manifest, indent=1).encode())
            fsync_dir(self.folder)
        for stale in self.folder.glob("dedupe_index-*.faiss*"):
            if stale.name != name:
                stale.unlink(missing_ok=True)
        return path

    def _read(self, manifest: dict[str, Any], config: IndexConfig) -> DedupeIndex:
        faiss = _faiss()
        path = self.folder / str(manifest.get("file", ""))
        if not path.is_file():
            raise ValueError(f"index file {path.name} named by the manifest is missing")
        if manifest.get("embedder") != self.embedder_name or manifest.get("dim") != config.dim:
            raise ValueError(f"index was built with embedder {manifest.get('embedder')!r} "
                             f"(dim {manifest.get('dim')}), not {self.embedder_name!r}")
        if path.stat().st_size != manifest.get("bytes") or _sha256(path) != manifest.get(
                "sha256"):
            raise ValueError(f"index file {path.name} does not match its checksum")
        index = faiss.read_index(str(path))
        if int(index.ntotal) != int(manifest.get("ntotal", -1)):
            raise ValueError("index size does not match the manifest")
        dedupe = DedupeIndex(config)
        dedupe.index = index
        dedupe.kind = str(manifest["kind"])
        dedupe.trained_size = int(manifest.get("trained_size", 0))
        dedupe.watermark = int(manifest["watermark"])
        if dedupe.kind == "ivf":
            dedupe.index.nprobe = config.nprobe or default_nprobe(index.nlist, dedupe.ntotal)
        return dedupe

    def load(self, config: IndexConfig, index_size_upto: Any,
             rows_after: Any) -> tuple[DedupeIndex, str]:
        """The saved index verified and caught up with the store, or one rebuilt from it.

        ``index_size_upto(w)`` counts stored index rows with id <= w; ``rows_after(w)`` yields
        ``(ids, vectors)`` batches of rows with id > w. Returns the index and what happened.
        """
        manifest = self.manifest()
        dedupe: DedupeIndex | None = None
        how = "new"
        if manifest is not None:
            try:
                dedupe = self._read(manifest, config)
                stored = index_size_upto(dedupe.watermark)
                if stored != dedupe.ntotal:
                    raise ValueError(f"index holds {dedupe.ntotal} vectors, the store {stored} "
                                     f"up to index id {dedupe.watermark}")
                how = "loaded"
            except Exception as exc:  # noqa: BLE001 - any damage means: rebuild from the store
                dedupe, how = None, f"rebuilt ({exc})"
        if dedupe is None:
            dedupe = DedupeIndex(config)
        added = _add_batches(dedupe, rows_after(dedupe.watermark))
        if added and how == "loaded":
            how = f"loaded, {added} added from the store"
        elif how == "new" and added:
            how = f"built from the store ({added} vectors)"
        return dedupe, how


def _add_batches(dedupe: DedupeIndex, batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> int:
    added = 0
    for ids, vectors in batches:
        dedupe.add(ids, vectors)
        added += len(ids)
    return added
