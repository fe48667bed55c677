"""Generation throughput of a backend: tokens per second single-stream versus batched.

``bench_generation()`` is the API (the CLI can expose it as ``spade bench generation``);
``python -m plugins.backends.generation_bench`` runs it from a shell. Completions are sampled
(temperature 0.8, fixed seed) from prompts that invite long answers, so most rows run to
``max_new_tokens``; throughput counts the completion tokens actually produced.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

PROMPTS = (
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Explain how a binary search works, step by step, with an example.",
    "Describe the water cycle to a ten-year-old.",
    "Write a Python function that checks whether a string is a palindrome, and explain it.",
    "List five facts about the Moon and explain each one.",
    "Write a letter to a friend describing your favourite city.",
    "Explain the difference between a list and a tuple in Python.",
    "Describe how to bake bread at home, from flour to loaf.",
)


@dataclass
class BenchResult:
    """Throughput of one batch size."""

    batch_size: int
    requests: int
    completion_tokens: int
    seconds: float
    tokens_per_second: float


def bench_generation(
    backend: Any = None,
    *,
    model: str = "bundled:smollm2-135m",
    batch_sizes: Sequence[int] = (1, 8),
    max_new_tokens: int = 64,
    warmup: bool = True,
) -> list[BenchResult]:
    """Measure completion tokens/s for each batch size, on ``backend`` or a fresh CPU/GPU
    transformers backend on ``model``. Batch size 1 runs the same number of requests one by one."""
    if backend is None:
        from plugins.backends.model_source import resolve_model
        from plugins.backends.transformers_backend import TransformersBackend

        backend = TransformersBackend(resolve_model(model).path, batch_size=max(batch_sizes))
    requests = max(batch_sizes)
    convs = [[{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}] for i in range(requests)]
    if warmup:
        backend.generate(convs[:1], max_new_tokens=4, temperature=0.8, seed=0)
    results = []
    for size in batch_sizes:
        tokens = 0
        started = time.perf_counter()
        for start in range(0, requests, size):
            gens = backend.generate(convs[start:start + size], max_new_tokens=max_new_tokens,
                                    temperature=0.8, seed=start)
            tokens += sum(len(g.completion_ids or []) for g in gens)
        seconds = time.perf_counter() - started
        results.append(BenchResult(size, requests, tokens, round(seconds, 2),
                                   round(tokens / seconds, 1)))
    return results


def build_backend(name: str, model: str, options: Sequence[str]) -> Any:
    """A registered generation backend (``transformers``, ``vllm``, ``vllm-server``, ...) built
    through the plugin registry with ``KEY=VALUE`` options (values parsed as YAML), so the bench
    measures exactly what a run would use."""
    from spade_core.components import BuildContext
    from spade_core.config.yaml_safe import load_yaml_text
    from spade_core.errors import UsageError
    from spade_core.plugins import load_plugins

    parsed: dict[str, Any] = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bench generation --option {item!r}: expected KEY=VALUE")
        parsed[key.strip()] = load_yaml_text(value.encode(), f"--option {key.strip()}")
    registry = load_plugins().registry
    return registry.build("generation_backend", name, parsed, "--backend",
                          BuildContext(model=model))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``spade bench generation``."""
    parser.add_argument("--model", default="bundled:smollm2-135m", metavar="SPEC",
                        help="the model, as model.path takes it: bundled:NAME, a local "
                             "directory, a .gguf file or hf:ORG/NAME (default: "
                             "bundled:smollm2-135m)")
    parser.add_argument("--backend", default="transformers",
                        help="a registered generation backend, e.g. transformers, vllm, "
                             "vllm-server")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a backend option, e.g. --option enforce_eager=true (repeatable)")
    parser.add_argument("--batch-sizes", default="1,8", help="comma-separated, e.g. 1,4,8")
    parser.add_argument("--max-new-tokens", type=int, default=64, metavar="N",
                        help="tokens generated per reply (default: 64)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run the benchmark with parsed options and print the results."""
    sizes = [int(x) for x in args.batch_sizes.split(",") if x.strip()]
    backend_name = getattr(args, "backend", "transformers")
    options = list(getattr(args, "option", []))
    if backend_name == "transformers" and not any(o.startswith("batch_size=") for o in options):
        options.append(f"batch_size={max(sizes)}")
    backend = build_backend(backend_name, args.model, options)
    try:
        results = bench_generation(backend, model=args.model, batch_sizes=sizes,
                                   max_new_tokens=args.max_new_tokens)
    finally:
        backend.close()
    machine = {"machine": platform.machine(), "cpus": os.cpu_count(),
               "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
               # other work on the machine skews the figures; record how busy it was
               "load_average_1m": (round(os.getloadavg()[0], 2)
                                   if hasattr(os, "getloadavg") else None)}
    if args.json:
        print(json.dumps({"model": args.model, "backend": backend_name, **machine,
                          "results": [asdict(r) for r in results]}))
    else:
        print(f"model {args.model}, backend {backend_name}; {machine}")
        print(f"{'batch':>5} {'requests':>8} {'tokens':>7} {'seconds':>8} {'tokens/s':>9}")
        for r in results:
            print(f"{r.batch_size:>5} {r.requests:>8} {r.completion_tokens:>7} {r.seconds:>8.2f} "
                  f"{r.tokens_per_second:>9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
