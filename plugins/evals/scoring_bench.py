"""Scoring replies in the sandbox against scoring them in this process: the per-item cost of
``spade eval``'s reasoning-gym scoring (docs/benchmarks.md, "Scoring replies in the sandbox").

The suite's items are generated in the sandbox, each dataset's in one instance that keeps them;
each item is scored with its gold reply by ``score_many`` (in the sandbox: one batched ``step``
per instance, the dataset's own scorer on the entry the instance already holds), ``--repeats``
times, as the samples of an evaluation are. For comparison, the same entries are generated and
scored by ``score_answer`` in this process: trusted gold answers only, never a model's reply.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--items", type=int, default=200, help="reasoning-gym items to score")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of the sandbox scoring")
    parser.add_argument("--workers", type=int, default=2, help="fork servers of the sandbox")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def measure(items: int, repeats: int, workers: int) -> dict[str, Any]:
    """The figures: per-item milliseconds in process and in the sandbox, and the gold score."""
    import reasoning_gym

    from plugins.evals.items import final_answer
    from plugins.evals.reasoning_gym_suite import HARD_BUCKETS, ReasoningGymSuite
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    specs = {d.name: d for bucket in HARD_BUCKETS.values() for d in bucket}
    with build_sandbox(ProcessSandboxOptions(workers=workers)) as box:
        suite = ReasoningGymSuite(None, box)
        try:
            chosen = suite.items(items, 0)
            pairs = [(item, item.gold[0] if item.gold else "") for item in chosen]
            runs, scores = [], []
            for _ in range(repeats):
                started = time.perf_counter()
                scores = suite.score_many(pairs)
                runs.append((time.perf_counter() - started) / len(pairs) * 1000)
        finally:
            suite.close()
    entries = []
    for item in chosen:
        spec = specs[item.data["dataset"]]
        dataset = reasoning_gym.create_dataset(spec.name, seed=item.data["seed"], size=1,
                                               **spec.config)
        entries.append((dataset, dataset[0]))
    started = time.perf_counter()
    for (dataset, entry), (_, reply) in zip(entries, pairs, strict=True):
        dataset.score_answer(final_answer(reply), entry)
    in_process = (time.perf_counter() - started) / len(pairs) * 1000
    return {"items": len(pairs), "in_process_ms": round(in_process, 3),
            "sandbox_ms": [round(r, 2) for r in runs], "gold_score": round(sum(scores), 3)}


def run(args: argparse.Namespace) -> int:
    figures = measure(args.items, args.repeats, args.workers)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"{figures['items']} reasoning-gym items scored with their gold replies "
          f"(total score {figures['gold_score']}):")
    print(f"  in this process: {figures['in_process_ms']} ms per item (score_answer only)")
    print("  in the sandbox:  " + ", ".join(f"{r} ms" for r in figures["sandbox_ms"])
          + " per item (scored in the instances holding the items)")
    return 0
