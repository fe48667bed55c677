"""The dedupe index: exact search switching to IVF (retrained with more lists as it grows), and its
files catching up with the store's rows saved after them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from envmemory.index import DedupeIndex, IndexConfig, IndexFiles


def test_dedupe_index_catches_up_with_rows_saved_after_it(tmp_path: Path) -> None:
    config = IndexConfig(dim=8)
    dedupe = DedupeIndex(config)
    rows = np.eye(8, dtype=np.float32)
    dedupe.add(np.arange(1, 5), rows[:4])
    files = IndexFiles(tmp_path, "test/8")
    files.save(dedupe)
    stored = {i + 1: rows[i] for i in range(8)}

    def after(w):
        ids = np.array([i for i in stored if i > w], dtype=np.int64)
        yield ids, np.stack([stored[i] for i in ids])

    loaded, how = files.load(config, lambda w: sum(1 for i in stored if i <= w), after)
    assert how == "loaded, 4 added from the store" and loaded.ntotal == 8
    assert list(tmp_path.glob("dedupe_index-*.faiss")) == [tmp_path / "dedupe_index-1.faiss"]


def test_ivf_retrains_with_more_lists_as_the_index_grows() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((1700, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dedupe = DedupeIndex(IndexConfig(dim=32, switch_size=100))
    for lo in range(0, 1700, 50):
        dedupe.add(np.arange(lo + 1, lo + 51), vectors[lo:lo + 50])
    info = dedupe.describe()
    assert info["kind"] == "ivf" and info["trained_size"] == 1600 and info["ntotal"] == 1700
    dedupe.index.nprobe = dedupe.index.nlist  # exhaustive: every vector must still be there
    sims, ids = dedupe.search(vectors[[0, 777, 1699]], 1)
    assert ids[:, 0].tolist() == [1, 778, 1700]


def test_a_full_disk_while_the_index_is_saved_keeps_the_previous_one(tmp_path: Path,
                                                                     monkeypatch) -> None:
    import pytest

    import envmemory.index as index_module
    from spade_core.disk_space import DiskFullError

    dedupe = DedupeIndex(IndexConfig(dim=8))
    dedupe.add(np.arange(1, 3), np.eye(8, dtype=np.float32)[:2])
    files = IndexFiles(tmp_path, "test/8")
    files.save(dedupe)
    faiss = index_module._faiss()

    class FullDiskFaiss:  # FAISS's own error when its write finds the disk full
        def write_index(self, index, path):
            Path(path).write_bytes(b"half")
            raise RuntimeError("Error in faiss::FileIOWriter: write error (No space left on "
                               "device)")

    monkeypatch.setattr(index_module, "_faiss", lambda: FullDiskFaiss())
    with pytest.raises(DiskFullError, match=r"could not write the environment memory's dedupe "
                                            r"index \(.*dedupe_index-2.faiss\): Error in faiss.*"
                                            r"No space left"):
        files.save(dedupe)
    monkeypatch.setattr(index_module, "_faiss", lambda: faiss)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dedupe_index-1.faiss",
                                                          "dedupe_index.json"]
    assert files.manifest()["file"] == "dedupe_index-1.faiss"
