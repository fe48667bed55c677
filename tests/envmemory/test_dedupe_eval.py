"""The dedupe measurement: precision and recall of a decision, the best-F1 threshold, and one
evaluation of the hashing embedder on the labelled pairs (fast: no model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from envmemory.dedupe_eval import best_threshold, evaluate, load_labelled, scores
from envmemory.embed import HashingEmbedder


def test_scores_count_hits_misses_and_false_alarms() -> None:
    got = scores(np.array([True, True, False, False]), np.array([True, False, True, False]))
    assert got == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "false_positives": 1,
                   "false_negatives": 1}
    assert scores(np.array([False, False]), np.array([False, False]))["f1"] == 1.0


def test_best_threshold_takes_the_best_f1_and_the_higher_of_ties() -> None:
    sims = np.array([0.9, 0.8, 0.3, 0.2])
    labels = np.array([True, True, False, False])
    assert best_threshold(sims, labels) == pytest.approx(0.8)
    # a pair the fingerprint already refuses needs no threshold to catch it
    forced = np.array([False, True, False, False])
    assert best_threshold(sims, labels, forced) == pytest.approx(0.9)


def test_missing_labelled_pairs_say_how_to_make_them(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no labelled pairs .*build_pairs.py"):
        load_labelled(tmp_path)


def test_hashing_code_rows_with_and_without_the_fingerprint() -> None:
    data = load_labelled()
    result = evaluate({"hashing": HashingEmbedder()}, data, representations=["code"],
                      thresholds={"hashing": 0.9}, descriptions=(True,))
    labels = [p["label"] == 1 for p in data.pairs]
    assert result["pairs"] == len(data.pairs) and result["near_duplicates"] == sum(labels)
    assert result["reference_fifo"]["let_through"] == sum(labels)
    alone, combined = result["rows"]
    assert (alone["with_fingerprint"], combined["with_fingerprint"]) == (False, True)
    assert alone["representation"] == "code" and alone["at_default"]["threshold"] == 0.9
    # refusing when either says duplicate only adds refusals
    assert combined["at_default"]["recall"] >= alone["at_default"]["recall"]
    assert combined["at_default"]["recall"] >= result["fingerprint_only"]["recall"]
    assert 0.0 < alone["at_best"]["f1"] <= 1.0
    assert set(alone["flagged_rate_by_kind"]) == {p["kind"] for p in data.pairs}
