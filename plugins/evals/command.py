"""Evaluate the configured model on held-out suites: pass@1 and pass@k per bucket and overall.

Items are fixed for a seed and replies come from the config's generation backend (transformers,
vLLM or an OpenAI-compatible server), so a run is reproducible. ``--checkpoint`` merges a run's
trained adapter into the model first; ``--baseline`` puts a second model (a checkpoint, ``base``
for the untrained model, or an earlier ``--out`` file) side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_SUITES = ("reasoning-gym", "bfcl")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``spade eval``."""
    parser.add_argument("config", metavar="CONFIG", help="run config (its model and backend)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--checkpoint", metavar="DIR",
                        help="a run directory (latest checkpoint), RUN_DIR/checkpoints/iter-N or "
                             "its trainer/ folder: its adapter is merged into the model")
    source.add_argument("--model", metavar="PATH", help="evaluate this model instead of "
                                                        "model.path (bundled:NAME, folder, .gguf)")
    parser.add_argument("--suite", action="append", metavar="NAME",
                        help="suite to run (repeatable; default: eval.suites of the config, else "
                             f"{', '.join(DEFAULT_SUITES)})")
    parser.add_argument("--option", action="append", default=[], metavar="SUITE.KEY=VALUE",
                        help="a suite option, e.g. pool.path=runs/x/envs.jsonl or "
                             "bfcl.categories=[simple,irrelevance]")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="at most N items per suite, spread over its buckets (default "
                             "eval.limit)")
    parser.add_argument("--samples", type=int, default=1, metavar="K",
                        help="replies per item; pass@K is reported when K > 1")
    parser.add_argument("--temperature", type=float,
                        help="sampling temperature (default 0 for one sample, else 0.8)")
    parser.add_argument("--max-new-tokens", type=int, metavar="N",
                        help="tokens per reply (default loop.agent_max_tokens)")
    parser.add_argument("--seed", type=int, help="item and sampling seed (default run.seed)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="compare with a checkpoint DIR, 'base' (the untrained model) or a "
                             "JSON file written by --out")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a config key, as for spade run")


def run(args: argparse.Namespace) -> int:
    from spade_core.config.load import load_config
    from spade_core.errors import UsageError
    from spade_core.plugins import load_plugins

    from plugins.evals.evaluate import EvalRequest, evaluate, suite_options
    from plugins.evals.scoring import SuiteResult, table

    if args.samples < 1 or (args.limit is not None and args.limit < 1):
        raise UsageError("eval: --samples and --limit must be at least 1")
    loaded = getattr(args, "_plugins", None) or load_plugins()
    overrides = list(args.overrides) + ([f"model.path={args.model}"] if args.model else [])
    resolved = load_config(args.config, loaded.registry, overrides)
    section = resolved.config.eval
    suites = list(dict.fromkeys(args.suite or section.suites or DEFAULT_SUITES))
    options = {name: dict(section.options.get(name, {})) for name in suites}
    for name, values in suite_options(args.option, suites).items():
        options[name].update(values)
    request = EvalRequest(
        suites=suites, options=options,
        limit=args.limit if args.limit is not None else section.limit,
        samples=args.samples, temperature=args.temperature, max_new_tokens=args.max_new_tokens,
        seed=args.seed, model_override=args.model)
    baseline: list[SuiteResult] | None = None
    baseline_label = None
    if args.baseline:
        baseline, baseline_label = _baseline(args.baseline, resolved, loaded.registry, request)
    started = time.perf_counter()
    results, settings = evaluate(resolved, loaded.registry, request, checkpoint=args.checkpoint)
    payload: dict[str, Any] = {
        "config": str(args.config), "model": resolved.config.model.path,
        "checkpoint": args.checkpoint, "settings": settings,
        "seconds": round(time.perf_counter() - started, 1),
        "suites": [r.to_dict() for r in results]}
    if baseline is not None:
        payload["baseline"] = {"source": baseline_label,
                               "suites": [r.to_dict() for r in baseline]}
    if args.out:
        Path(args.out).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if args.json:
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        label = "checkpoint" if args.checkpoint else "model"
        print(table(results, baseline, (label, "baseline")))
    return 0


def _baseline(source: str, resolved: Any, registry: Any, request: Any) -> tuple[list[Any], str]:
    """The baseline's results: read from an earlier ``--out`` file, or evaluated now."""
    from plugins.evals.evaluate import evaluate, results_from_json

    path = Path(source)
    if path.is_file():
        return results_from_json(json.loads(path.read_text(encoding="utf-8"))), str(path)
    checkpoint = None if source == "base" else source
    results, _ = evaluate(resolved, registry, request, checkpoint=checkpoint)
    return results, source
