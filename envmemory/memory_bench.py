"""``spade bench memory``: scale, speed and dedupe quality of the environment memory.

Measures, in one run: the dedupe index (flat switching to IVF) at 10k, 100k and 1M vectors up to
``--size`` (build time, memory, query latency p50/p99, recall@10 against exact search, an nprobe
sweep at the largest size), a brute-force NumPy scan at the same sizes, add throughput through the
full memory API (SQLite transaction + index per record), embedding throughput of the built-in
embedders, and the dedupe decision on the labelled pairs next to the reference's 200-record FIFO.

Vectors for the scale part are synthetic 384-dim unit vectors (a million real embeddings would take
half an hour to compute here): ``TopicVectors`` have topic/subtopic structure, as a million
proposals grounded in a document corpus would; ``DiffuseVectors`` are a worst case with no tight
neighbourhoods, run at a smaller size to show what IVF costs when the data does not cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
SCALE_SIZES = (10_000, 100_000, 1_000_000)


def _log(message: str) -> None:
    """Progress on stderr, so ``--json`` output on stdout stays clean."""
    print(f"[bench memory] {message}", file=sys.stderr, flush=True)


def _rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class TopicVectors:
    """Deterministic synthetic embeddings with topic structure: topic direction + subtopic
    direction + small noise (a million designer proposals grounded in a corpus cluster by topic).
    Nearest-neighbour cosine ~0.85, random pairs ~0."""

    name = "topics"

    def __init__(self, dim: int = DIM, topics: int = 1000, subtopics: int = 50,
                 seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.dim = dim
        self.subtopics = subtopics
        self.topic = _unit(rng.standard_normal((topics, dim)).astype(np.float32))
        self.sub = _unit(rng.standard_normal((topics * subtopics, dim)).astype(np.float32))

    def sample(self, n: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        out = np.empty((n, self.dim), dtype=np.float32)
        for start in range(0, n, 100_000):
            m = min(100_000, n - start)
            sub = rng.integers(0, len(self.sub), m)
            x = self.topic[sub // self.subtopics] + 0.7 * self.sub[sub]
            x += 0.45 * rng.standard_normal((m, self.dim)).astype(np.float32) / np.sqrt(self.dim)
            out[start:start + m] = _unit(x)
        return out


class DiffuseVectors:
    """Worst case: a continuous 32-dimensional manifold with weak topics; neighbours are far
    (nearest-neighbour cosine ~0.55) and IVF cells cut through every neighbourhood."""

    name = "diffuse"

    def __init__(self, dim: int = DIM, rank: int = 32, topics: int = 2000, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.dim = dim
        self.basis = rng.standard_normal((rank, dim)).astype(np.float32) / np.sqrt(rank)
        self.topic = _unit(rng.standard_normal((topics, dim)).astype(np.float32))

    def sample(self, n: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        z = _unit(rng.standard_normal((n, self.basis.shape[0])).astype(np.float32) @ self.basis)
        x = 0.6 * self.topic[rng.integers(0, len(self.topic), n)] + z
        x += 0.3 * rng.standard_normal((n, self.dim)).astype(np.float32) / np.sqrt(self.dim)
        return _unit(x)


def _unit(x: np.ndarray) -> np.ndarray:
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def _percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 4),
            "p99_ms": round(float(np.percentile(ms, 99)), 4),
            "mean_ms": round(float(ms.mean()), 4)}


def _latency(search: Any, queries: np.ndarray) -> list[float]:
    times = []
    for i in range(len(queries)):
        start = time.perf_counter()
        search(queries[i:i + 1])
        times.append(time.perf_counter() - start)
    return times


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    k = truth.shape[1]
    return float(np.mean([len(set(f) & set(t)) / k for f, t in zip(found, truth)]))


def bench_scale(n: int, data: TopicVectors | DiffuseVectors, queries: int, switch_size: int,
                sweep: bool) -> dict[str, Any]:
    """Pool index vs exact search vs NumPy scan at ``n`` vectors."""
    import faiss

    from envmemory.index import DedupeIndex, IndexConfig

    _log(f"{n:,} vectors: generating, building, querying")
    vectors = data.sample(n, seed=1)
    rng = np.random.default_rng(2)
    picks = rng.integers(0, n, queries)
    # Queries: near-duplicates of stored vectors (the dedupe case) and fresh samples, half each.
    # (perturbed to cosine ~0.7-0.93 with their original: the range a dedupe threshold acts on)
    scale = rng.uniform(0.02, 0.05, (queries // 2, 1)).astype(np.float32)
    near = vectors[picks[: queries // 2]] + rng.standard_normal(
        (queries // 2, DIM)).astype(np.float32) * scale
    fresh = data.sample(queries - queries // 2, seed=3)
    q = np.concatenate([near, fresh]).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)

    rss0 = _rss_mb()
    dedupe = DedupeIndex(IndexConfig(dim=DIM, switch_size=switch_size))
    ids = np.arange(1, n + 1, dtype=np.int64)
    start = time.perf_counter()
    for lo in range(0, n, 10_000):
        dedupe.add(ids[lo:lo + 10_000], vectors[lo:lo + 10_000])
    build_s = time.perf_counter() - start
    index_mb = _rss_mb() - rss0

    exact = faiss.IndexFlatIP(DIM)
    exact.add(vectors)
    _, truth = exact.search(q, 10)
    truth = truth + 1  # index ids start at 1
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        index_times = _latency(lambda x: dedupe.search(x, 10), q)
        _, found = dedupe.search(q, 10)
        exact_times = _latency(lambda x: exact.search(x, 10), q[:50])

        def numpy_scan(x: np.ndarray) -> np.ndarray:
            sims = vectors @ x[0]
            top = np.argpartition(-sims, 10)[:10]
            return top[np.argsort(-sims[top])]

        numpy_times = _latency(numpy_scan, q[:20])
        row: dict[str, Any] = {
            "size": n, "data": data.name, "index": dedupe.describe(), "build_s": round(build_s, 2),
            "index_rss_mb": round(index_mb, 1),
            "vectors_mb": round(vectors.nbytes / 2**20, 1),
            "query": _percentiles(index_times), "recall_at_10": round(_recall(found, truth), 4),
            "recall_at_10_near_duplicate_queries": round(
                _recall(found[: queries // 2], truth[: queries // 2]), 4),
            "recall_at_10_fresh_queries": round(
                _recall(found[queries // 2:], truth[queries // 2:]), 4),
            # the dedupe question itself: is a perturbed copy's original the top hit?
            "near_duplicate_top1": round(float(np.mean(
                found[: queries // 2, 0] == picks[: queries // 2] + 1)), 4),
            "faiss_exact_query": _percentiles(exact_times),
            "numpy_scan_query": _percentiles(numpy_times),
        }
        if sweep and dedupe.kind == "ivf":
            row["nprobe_sweep"] = []
            default = dedupe.index.nprobe
            for nprobe in (4, 8, 16, 32, 64):
                dedupe.index.nprobe = nprobe
                times = _latency(lambda x: dedupe.search(x, 10), q)
                _, found = dedupe.search(q, 10)
                row["nprobe_sweep"].append({
                    "nprobe": nprobe, **_percentiles(times),
                    "recall_at_10": round(_recall(found, truth), 4),
                    "near_duplicate_top1": round(float(np.mean(
                        found[: queries // 2, 0] == picks[: queries // 2] + 1)), 4)})
            dedupe.index.nprobe = default
    finally:
        faiss.omp_set_num_threads(threads)
    return row


def bench_adds(count: int) -> dict[str, Any]:
    """Records per second through ``FaissEnvMemory.add`` (one SQLite transaction each, vectors
    given, half mastered so half also go into the index) and ``find_duplicate`` latency."""
    from envmemory.embed import HashingEmbedder
    from envmemory.faiss_memory import FaissEnvMemory
    from envmemory.options import MemoryOptions
    from spade_core.records import EnvRecord

    _log(f"adding {count:,} records through the memory API")
    data = TopicVectors(seed=5)
    vectors = data.sample(count, seed=6)
    with tempfile.TemporaryDirectory() as tmp:
        memory = FaissEnvMemory(Path(tmp), MemoryOptions(embedder="hashing"),
                                embedder=HashingEmbedder())
        start = time.perf_counter()
        for i in range(count):
            source = (f"class Env{i}Env:\n    def reset(self, seed=None):\n"
                      f"        return 'task {i}', {{}}\n")
            memory.add(EnvRecord(id=f"bench{i:08d}", source=source, family="bench",
                                 status="mastered" if i % 2 else "frontier",
                                 embedding=vectors[i].tolist()))
        add_s = time.perf_counter() - start
        probes = _probe_programs(200)
        times = _latency(lambda batch: memory.find_duplicate(probes[int(batch[0, 0])]),
                         np.arange(200).reshape(-1, 1))
        memory.close()
    return {"records": count, "adds_per_s": round(count / add_s, 1),
            "find_duplicate_hashing": _percentiles(times)}


def _probe_programs(count: int) -> list[Any]:
    """Realistic candidates for ``find_duplicate``: the labelled environment programs (none of
    them stored), or small generated classes when the labelled set is not available."""
    from spade_core.records import EnvProgram

    try:
        from envmemory.dedupe_eval import load_labelled

        sources = [p["source"] for p in load_labelled().programs.values()]
    except FileNotFoundError:
        sources = [f"class P{i}Env:\n    def reset(self, seed=None):\n        return "
                   f"'probe {i}' * {i % 5 + 1}, {{}}\n" for i in range(count)]
    return [EnvProgram(source=sources[i % len(sources)] + f"\n# probe {i}\n", family="bench")
            for i in range(count)]


def bench_embedding(texts: list[str], minilm: bool) -> dict[str, Any]:
    from envmemory.embed import HashingEmbedder, load_embedder

    out: dict[str, Any] = {"texts": len(texts),
                           "mean_chars": round(float(np.mean([len(t) for t in texts])), 1)}
    embedders = {"hashing": HashingEmbedder()}
    if minilm:
        import torch

        torch.set_num_threads(1)  # two torch threads fight on two cores (docs/memory.md)
        embedders["minilm"] = load_embedder("minilm")
    for name, embedder in embedders.items():
        embedder.embed(texts[:4])
        start = time.perf_counter()
        embedder.embed(texts)
        out[f"{name}_texts_per_s"] = round(len(texts) / (time.perf_counter() - start), 1)
    return out


def bench_labelled(minilm: bool, all_representations: bool) -> dict[str, Any]:
    """Embedding throughput and the dedupe decision on the labelled pairs (source checkouts
    only: an installed wheel has no ``tests/`` folder, and then this part is skipped)."""
    from envmemory.dedupe_eval import evaluate, load_labelled
    from envmemory.embed import HashingEmbedder, load_embedder
    from envmemory.representation import DEFAULT_REPRESENTATION, env_text

    _log("embedding throughput and dedupe on the labelled pairs")
    try:
        data_set = load_labelled()
    except FileNotFoundError as exc:
        return {"dedupe": {"skipped": str(exc)}}
    texts = [env_text(p["source"], p["description"]) for p in data_set.programs.values()]
    out: dict[str, Any] = {"embedding": bench_embedding(texts, minilm)}
    embedders: dict[str, Any] = {"hashing": HashingEmbedder()}
    if minilm:
        embedders["minilm"] = load_embedder("minilm")
    reps = None if all_representations else [DEFAULT_REPRESENTATION]
    out["dedupe"] = evaluate(embedders, data_set, reps,
                             thresholds={k: v.default_threshold for k, v in embedders.items()})
    return out


def run_bench(size: int = 1_000_000, queries: int = 500, switch_size: int = 10_000,
              adds: int = 2000, minilm: bool = True, labelled: bool = True,
              all_representations: bool = False, diffuse_size: int = 100_000
              ) -> dict[str, Any]:
    """Everything ``spade bench memory`` reports, as one JSON-ready dict."""
    import faiss

    started = time.time()
    sizes = sorted({s for s in SCALE_SIZES if s <= size} | {size})
    data = TopicVectors()
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "faiss": faiss.__version__,
                    "omp_threads_build": faiss.omp_get_max_threads(),
                    "query_threads": 1},
        "settings": {"size": size, "queries": queries, "switch_size": switch_size,
                     "dim": DIM, "data": "synthetic unit vectors: topics (scale) and diffuse "
                             "(worst case), see TopicVectors and DiffuseVectors"},
        "scale": [bench_scale(n, data, queries, switch_size, sweep=n == sizes[-1])
                  for n in sizes],
        "diffuse": bench_scale(min(size, diffuse_size), DiffuseVectors(), queries,
                               switch_size, sweep=True) if diffuse_size else None,
        "adds": bench_adds(adds),
    }
    if labelled:
        result.update(bench_labelled(minilm, all_representations))
    top = result["scale"][-1]
    result["goal"] = {"size": top["size"], "p50_ms": top["query"]["p50_ms"],
                      "recall_at_10": top["recall_at_10"],
                      "met": top["query"]["p50_ms"] <= 1.0 and top["recall_at_10"] >= 0.95}
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["seconds"] = round(time.time() - started, 1)
    return result


def _print_text(result: dict[str, Any]) -> None:
    print(f"machine: {result['machine']['cpus']} CPUs, faiss {result['machine']['faiss']}")
    for row in result["scale"]:
        print(f"{row['size']:>9,} vectors  {row['index']['kind']:<4} build {row['build_s']:7.1f} s"
              f"  p50 {row['query']['p50_ms']:.3f} ms  p99 {row['query']['p99_ms']:.3f} ms"
              f"  recall@10 {row['recall_at_10']:.3f}  numpy scan p50 "
              f"{row['numpy_scan_query']['p50_ms']:.1f} ms  index ~{row['index_rss_mb']:.0f} MB")
        for sweep in row.get("nprobe_sweep", []):
            print(f"           nprobe {sweep['nprobe']:>2}: p50 {sweep['p50_ms']:.3f} ms "
                  f"p99 {sweep['p99_ms']:.3f} ms recall@10 {sweep['recall_at_10']:.3f}")
    if result.get("diffuse"):
        row = result["diffuse"]
        print(f"diffuse worst case at {row['size']:,}: p50 {row['query']['p50_ms']:.3f} ms, "
              f"recall@10 {row['recall_at_10']:.3f}, near-duplicate top-1 "
              f"{row['near_duplicate_top1']:.3f} (nprobe {row['index'].get('nprobe')})")
        for sweep in row.get("nprobe_sweep", []):
            print(f"           nprobe {sweep['nprobe']:>2}: p50 {sweep['p50_ms']:.3f} ms "
                  f"recall@10 {sweep['recall_at_10']:.3f} top-1 {sweep['near_duplicate_top1']:.3f}")
    adds = result["adds"]
    print(f"adds: {adds['adds_per_s']:.0f}/s through the memory API")
    if "embedding" in result:
        print("embedding:", {k: v for k, v in result["embedding"].items()})
    if "dedupe" in result and "skipped" in result["dedupe"]:
        print(f"dedupe check skipped: {result['dedupe']['skipped']}")
    elif "dedupe" in result:
        d = result["dedupe"]
        print(f"dedupe on {d['pairs']} labelled pairs ({d['near_duplicates']} near-duplicates); "
              f"reference FIFO-200 lets through {d['reference_fifo']['let_through']}")
        for row in d["rows"]:
            at = row.get("at_default", row["at_best"])
            print(f"  {row['embedder']:<8} {row['representation']:<16} "
                  f"description={row['descriptions']!s:<5} "
                  f"fingerprint={row['with_fingerprint']!s:<5} threshold "
                  f"{at.get('threshold', row['best_threshold'])}: precision {at['precision']:.3f}"
                  f" recall {at['recall']:.3f}")
    goal = result["goal"]
    print(f"goal (p50 <= 1 ms, recall@10 >= 0.95 at {goal['size']:,}): "
          f"{'met' if goal['met'] else 'missed'} (p50 {goal['p50_ms']} ms, recall "
          f"{goal['recall_at_10']})")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--size", type=int, default=1_000_000,
                        help="largest index size (also runs 10k and 100k below it)")
    parser.add_argument("--queries", type=int, default=500, help="single queries per size")
    parser.add_argument("--switch-size", type=int, default=10_000,
                        help="index size at which exact search becomes IVF")
    parser.add_argument("--adds", type=int, default=2000,
                        help="records added through the memory API for add throughput")
    parser.add_argument("--diffuse-size", type=int, default=100_000,
                        help="size of the worst-case diffuse-data run (0 skips it)")
    parser.add_argument("--no-minilm", action="store_true",
                        help="skip the MiniLM embedder (faster; hashing only)")
    parser.add_argument("--no-labelled", action="store_true",
                        help="skip embedding throughput and the labelled-pairs dedupe check")
    parser.add_argument("--all-representations", action="store_true",
                        help="score every text representation on the labelled pairs")


def run(args: argparse.Namespace) -> int:
    from spade_core.errors import UsageError

    if args.size < 1000 or args.queries < 20 or args.adds < 1:
        raise UsageError("bench memory: --size must be >= 1000, --queries >= 20, --adds >= 1")
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    result = run_bench(size=args.size, queries=args.queries, switch_size=args.switch_size,
                       adds=args.adds, minilm=not args.no_minilm,
                       labelled=not args.no_labelled,
                       all_representations=args.all_representations,
                       diffuse_size=args.diffuse_size)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        _print_text(result)
    return 0
