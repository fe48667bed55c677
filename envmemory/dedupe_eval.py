"""Measures dedupe decisions on the labelled pairs in ``tests/envmemory/data``.

For each embedder and text representation: the cosine similarity of every pair, precision and
recall of "near-duplicate" at a threshold, the threshold with the best F1, and a two-fold estimate
(threshold chosen on half of the base environments, scored on the other half) so the figure is not
only fitted to the set. The structural fingerprint (``envmemory.representation.fingerprint``) is scored alone
and combined with each representation (refuse if either says duplicate), which is what the memory
does. The reference's 200-record FIFO has no dedupe at all: it lets every near-duplicate through.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from envmemory.embed import Embedder
from envmemory.representation import REPRESENTATIONS, env_text, fingerprint

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "tests" / "envmemory" / "data"


@dataclass(frozen=True)
class LabelledSet:
    programs: dict[str, dict[str, Any]]
    pairs: list[dict[str, Any]]


def load_labelled(folder: Path = DEFAULT_DATA) -> LabelledSet:
    """The programs and pairs written by ``tests/envmemory/data/build_pairs.py``."""
    folder = Path(folder)
    if not (folder / "pairs.jsonl").is_file():
        raise FileNotFoundError(f"no labelled pairs at {folder} (pairs.jsonl); run "
                                "tests/envmemory/data/build_pairs.py in a source checkout")
    programs = {}
    for line in (folder / "programs.jsonl").read_text().splitlines():
        row = json.loads(line)
        programs[row["id"]] = row
    pairs = [json.loads(line) for line in (folder / "pairs.jsonl").read_text().splitlines()]
    return LabelledSet(programs, pairs)


def scores(predicted: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    tp = int(np.sum(predicted & labels))
    fp = int(np.sum(predicted & ~labels))
    fn = int(np.sum(~predicted & labels))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "false_positives": fp, "false_negatives": fn}


def best_threshold(sims: np.ndarray, labels: np.ndarray, forced: np.ndarray | None = None
                   ) -> float:
    """The threshold with the highest F1 (ties: the highest threshold, the safer one)."""
    forced = np.zeros_like(labels) if forced is None else forced
    best, best_f1 = 1.0, -1.0
    for t in np.unique(sims)[::-1]:  # exact values: a rounded one could sit above a pair
        f1 = scores((sims >= t) | forced, labels)["f1"]
        if f1 > best_f1:
            best, best_f1 = float(t), f1
    return best


def _two_fold(sims: np.ndarray, labels: np.ndarray, bases: list[tuple[str, str]],
              forced: np.ndarray) -> dict[str, float]:
    names = sorted({b for pair in bases for b in pair})
    halves = (set(names[0::2]), set(names[1::2]))
    predicted = np.zeros_like(labels)
    covered = np.zeros_like(labels)
    for train, test in (halves, halves[::-1]):
        in_train = np.array([a in train and b in train for a, b in bases])
        in_test = np.array([a in test and b in test for a, b in bases])
        t = best_threshold(sims[in_train], labels[in_train], forced[in_train])
        predicted[in_test] = (sims[in_test] >= t) | forced[in_test]
        covered |= in_test
    return scores(predicted[covered], labels[covered])


def evaluate(embedders: dict[str, Embedder], data: LabelledSet,
             representations: list[str] | None = None,
             thresholds: dict[str, float] | None = None,
             descriptions: tuple[bool, ...] = (True, False)) -> dict[str, Any]:
    """Precision/recall of every (embedder, representation), alone and with the fingerprint,
    with the designer's one-line description and without it (the loop may not have one)."""
    representations = representations or list(REPRESENTATIONS)
    pairs = data.pairs
    labels = np.array([p["label"] == 1 for p in pairs])
    bases = [(data.programs[p["a"]]["base"], data.programs[p["b"]]["base"]) for p in pairs]
    prints = {pid: fingerprint(p["source"]) for pid, p in data.programs.items()}
    structural = np.array([prints[p["a"]] == prints[p["b"]] for p in pairs])
    result: dict[str, Any] = {
        "pairs": len(pairs), "near_duplicates": int(labels.sum()),
        "different": int((~labels).sum()),
        "fingerprint_only": scores(structural, labels),
        "reference_fifo": {
            "recall": 0.0, "let_through": int(labels.sum()),
            "note": "no dedupe: every near-duplicate is let through",
            # even an exact comparison of the 2,000-character code prefixes it stores:
            "exact_prefix_let_through": int(sum(
                1 for p, dup in zip(pairs, labels) if dup and
                data.programs[p["a"]]["source"][:2000] != data.programs[p["b"]]["source"][:2000])),
        },
        "rows": [],
    }
    ids = list(data.programs)
    combos = [(name, rep, described) for name in embedders for rep in representations
              for described in descriptions
              if described or rep in ("description", "task", "mix")]
    for embedder_name, rep, described in combos:
        embedder = embedders[embedder_name]
        texts = [env_text(data.programs[i]["source"],
                          data.programs[i]["description"] if described else "", rep)
                 for i in ids]
        vectors = dict(zip(ids, embedder.embed(texts)))
        sims = np.array([float(vectors[p["a"]] @ vectors[p["b"]]) for p in pairs])
        for combined in (False, True):
            forced = structural if combined else np.zeros_like(labels)
            best = best_threshold(sims, labels, forced)
            row = {"embedder": embedder_name, "representation": rep,
                   "descriptions": described, "with_fingerprint": combined,
                   "best_threshold": round(best, 4),
                   "at_best": scores((sims >= best) | forced, labels),
                   "two_fold": _two_fold(sims, labels, bases, forced),
                   "dup_sim_min": round(float(sims[labels].min()), 4),
                   "diff_sim_max": round(float(sims[~labels].max()), 4)}
            if thresholds and embedder_name in thresholds:
                t = thresholds[embedder_name]
                row["at_default"] = {"threshold": t, **scores((sims >= t) | forced, labels)}
            by_kind = {}
            for kind in sorted({p["kind"] for p in pairs}):
                mask = np.array([p["kind"] == kind for p in pairs])
                hit = ((sims >= best) | forced)[mask]
                by_kind[kind] = round(float(hit.mean()), 4)
            row["flagged_rate_by_kind"] = by_kind
            result["rows"].append(row)
    return result
