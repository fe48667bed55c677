"""The record store's crash safety: kill -9 a writer at random moments; the store keeps every
committed record and the index reloads consistent with it. A reader works while the writer
writes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from envmemory.faiss_memory import FaissEnvMemory
from envmemory.options import MemoryOptions
from envmemory.store import RecordStore

WRITER = textwrap.dedent("""
    import sys
    from envmemory.faiss_memory import FaissEnvMemory
    from envmemory.options import MemoryOptions
    from spade_core.records import EnvRecord

    folder, start = sys.argv[1], int(sys.argv[2])
    memory = FaissEnvMemory(folder, MemoryOptions(embedder="hashing", switch_size=150,
                                                  save_every=20, mastery_rollouts=2))
    print("open", memory.load_report, flush=True)
    for i in range(start, start + 100000):
        env_id = f"env{i:07d}"
        source = (f"class Task{i}Env:\\n    def reset(self, seed=None):\\n"
                  f"        return 'task {i} of {i % 7}', {{}}\\n")
        memory.add(EnvRecord(id=env_id, source=source, family=f"f{i % 3}",
                             status="mastered" if i % 3 == 0 else "frontier"))
        print("added", env_id, flush=True)
        if i % 3 == 1:
            memory.update_stats(env_id, 0, [1, 1], [1, 1], {"regret": 0.0}, 0.0)
            print("mastered", env_id, flush=True)
""")


def _options() -> MemoryOptions:
    return MemoryOptions(embedder="hashing", switch_size=150, save_every=20, mastery_rollouts=2)


def _check(folder: Path, added: set[str], mastered: set[str]) -> int:
    memory = FaissEnvMemory(folder, _options())
    try:
        for env_id in added:
            assert memory.get(env_id) is not None, f"committed record {env_id} lost"
        for env_id in mastered:
            assert memory.get(env_id).status == "mastered", f"mastery of {env_id} lost"
        index_rows = memory.store.index_size()
        assert memory.dedupe_index.ntotal == index_rows, memory.load_report
        sample = random.Random(0).sample(sorted(mastered), min(10, len(mastered)))
        for env_id in sample:
            vector = np.asarray(memory.get(env_id).embedding, dtype=np.float32)
            hit, sim = memory.nearest_mastered(vector, k=1)[0]
            assert sim == pytest.approx(1.0, abs=1e-4)
        return memory.store.counts()["records"]
    finally:
        memory.close()


@pytest.mark.slow
def test_kill_9_at_random_points_loses_nothing_committed(tmp_path: Path) -> None:
    rng = random.Random(1234)
    added: set[str] = set()
    mastered: set[str] = set()
    start = 0
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    reader_counts = []
    for round_no in range(6):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(start)],
                                stdout=subprocess.PIPE, text=True, env=env)
        first = proc.stdout.readline()
        assert first.startswith("open"), first
        time.sleep(rng.uniform(0.2, 1.5))
        if round_no % 2 == 0:  # a report reads while the run writes
            reader = RecordStore(tmp_path, readonly=True)
            reader_counts.append(reader.counts()["records"])
            reader.close()
        proc.send_signal(signal.SIGKILL)
        out = proc.stdout.read()  # same buffered reader as readline: nothing read ahead is lost
        proc.stdout.close()
        assert proc.wait(timeout=30) == -signal.SIGKILL
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "added":
                added.add(parts[1])
            elif len(parts) == 2 and parts[0] == "mastered":
                mastered.add(parts[1])
        records = _check(tmp_path, added, mastered)
        # beyond what was reported, at most the record being written at each kill was committed
        assert len(added) <= records <= len(added) + round_no + 1
        start += 100000
    assert len(added) > 100 and reader_counts
    assert any(p.name.startswith("dedupe_index-") for p in tmp_path.iterdir())


def test_a_full_disk_rolls_the_write_back_and_names_the_database(tmp_path: Path) -> None:
    from spade_core.disk_space import DiskFullError
    from spade_core.records import EnvIteration, EnvRecord

    store = RecordStore(tmp_path)
    try:
        def big(name: str) -> EnvRecord:
            return EnvRecord(id=name, source="x" * 200_000, family="games", status="frontier")

        assert store.insert(big("first"), None, None, False)
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own full disk
        with pytest.raises(DiskFullError) as full:
            store.insert(big("second"), None, None, False)
        assert str(full.value).startswith(
            f"could not write the environment memory's record of environment second "
            f"({tmp_path / 'memory.sqlite'}): database or disk is full")
        with pytest.raises(DiskFullError, match="play of environment first in iteration 0"):
            store.record_iteration("first", EnvIteration(iteration=0, hinted=[1.0] * 50_000,
                                                         unhinted=[], figures={},
                                                         designer_reward=0.0, at=1.0),
                                   {"regret": 0.5}, "frontier", False)
        assert [r.id for r in store.records()] == ["first"]  # both rolled back
        assert store.history("first") == []
        store.conn.execute("PRAGMA max_page_count = 1073741823")  # space freed
        assert store.insert(big("second"), None, None, False)
    finally:
        store.close()
