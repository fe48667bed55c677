"""``spade eval CONFIG``: evaluate the configured model on held-out suites, pass@1 and pass@k per
bucket and overall.

Items are fixed for a seed and replies come from the config's generation backend (transformers,
vLLM or an OpenAI-compatible server), so a run is reproducible. ``--checkpoint`` merges a run's
trained adapter into the model first; ``--baseline`` puts a second model (a checkpoint, ``base``
for the untrained model, or an earlier ``--out`` file) side by side. The work is done by
:func:`spade_core.eval.run.run_eval`, which :func:`spade_core.evaluate` calls too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELP = "held-out evaluation: pass@1/pass@k per bucket on eval suites"


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("eval", help=HELP, description=HELP)
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``spade eval``."""
    from spade_core.eval.run import DEFAULT_SUITES

    parser.add_argument("config", metavar="CONFIG", nargs="?",
                        help="run config (its model and backend); not needed with --results")
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
                        help="a suite option, e.g. programs.path=runs/x/envs.jsonl or "
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
    parser.add_argument("--baseline", metavar="DIR|FILE|base", action="append",
                        help="compare with a checkpoint DIR, 'base' (the untrained model) or a "
                             "JSON file written by --out; with --results, one --out file per "
                             "seed (repeatable)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE")
    parser.add_argument("--table", choices=("rq1", "rq2"),
                        help="print the paper's RQ1 or RQ2 columns (pass@1 with a 95 %% interval "
                             "over items, or over seeds with several --results; n/a where the "
                             "suite was not run); the suites then play the paper's protocol "
                             "unless their options say otherwise (reasoning-gym: protocol "
                             "reference; livecodebench: release_v6)")
    parser.add_argument("--results", nargs="+", metavar="FILE",
                        help="evaluate nothing: print --table for these files written by --out, "
                             "one per seed (the interval is then over the seeds)")
    parser.add_argument("--save-replies", action="store_true",
                        help="keep each item's prompt, replies, extracted answers and scores in "
                             "the JSON result (off by default: large)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a config key, as for spade run")


def suite_options(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``SUITE.KEY=VALUE`` pairs (values parsed as YAML scalars or flow lists) by suite."""
    from spade_core.config.yaml_safe import parse_scalar
    from spade_core.errors import UsageError

    options: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        head, sep, raw = pair.partition("=")
        suite, dot, key = head.rpartition(".")
        if not sep or not dot or not key:
            raise UsageError(f"eval: --option {pair!r}: write SUITE.KEY=VALUE, e.g. "
                             "programs.path=runs/x/envs.jsonl")
        options.setdefault(suite, {})[key] = parse_scalar(raw, f"--option {pair}")
    return options


def run(args: argparse.Namespace) -> int:
    from spade_core.api import load_config
    from spade_core.errors import UsageError
    from spade_core.eval.run import run_eval
    from spade_core.eval.table import table
    from spade_core.plugins import load_plugins

    if args.results:
        return _saved_table(args)
    if not args.config:
        raise UsageError("eval: name a CONFIG to evaluate, or --results FILE ... with --table")
    if args.baseline and len(args.baseline) > 1:
        raise UsageError("eval: give --baseline once when evaluating; several --baseline files "
                         "(one per seed) go with --results")
    loaded = getattr(args, "_plugins", None) or load_plugins()
    overrides = list(args.overrides) + ([f"model.path={args.model}"] if args.model else [])
    resolved = load_config(args.config, overrides, loaded)
    defaults = None
    if args.table:
        from spade_core.eval.paper_table import TABLE_OPTIONS

        defaults = TABLE_OPTIONS[args.table]
    evaluation = run_eval(
        resolved, loaded.registry, config_label=str(args.config), suites=args.suite,
        options=suite_options(args.option), limit=args.limit, samples=args.samples,
        temperature=args.temperature, max_new_tokens=args.max_new_tokens, seed=args.seed,
        model=args.model, checkpoint=args.checkpoint,
        baseline=args.baseline[0] if args.baseline else None,
        save_replies=args.save_replies, defaults=defaults)
    payload = evaluation.payload
    if args.out:
        Path(args.out).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if args.json:
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        label = "checkpoint" if args.checkpoint else "model"
        scored = payload["scored"]
        print(f"scored: {scored['model']}" + (f", checkpoint {scored['checkpoint']}"
                                              if scored["checkpoint"] else ""))
        if args.table:
            from spade_core.eval.paper_table import paper_table

            print(paper_table(args.table, evaluation.results, evaluation.baseline,
                              (label, "baseline")))
        else:
            print(table(evaluation.results, evaluation.baseline, (label, "baseline")))
    return 0


def _saved_table(args: argparse.Namespace) -> int:
    """``--results FILE ...``: the paper's table from earlier ``--out`` files, one per seed; the
    baseline from ``--baseline`` files, else from the baselines those files hold."""
    from spade_core.errors import UsageError
    from spade_core.eval.paper_table import paper_table
    from spade_core.eval.scores import results_from_json

    if not args.table:
        raise UsageError("eval: --results prints the paper's table: add --table rq1 or rq2")
    if args.config or args.checkpoint or args.model or args.suite or args.json or args.out:
        raise UsageError("eval: --results evaluates nothing: drop CONFIG, --checkpoint, --model, "
                         "--suite, --json and --out")
    payloads = [_read_result(path) for path in args.results]
    runs = [results_from_json(p) for p in payloads]
    if args.baseline:
        baseline = [results_from_json(_read_result(path)) for path in args.baseline]
    elif all("baseline" in p for p in payloads):
        baseline = [results_from_json(p["baseline"]) for p in payloads]
    else:
        baseline = None
    models = dict.fromkeys(str(p.get("scored", {}).get("checkpoint") or p.get("model"))
                           for p in payloads)
    print(f"scored: {', '.join(models)} ({len(runs)} result file{'s' * (len(runs) > 1)})")
    print(paper_table(args.table, runs, baseline, ("model", "baseline")))
    return 0


def _read_result(path: str) -> dict[str, Any]:
    from spade_core.errors import UsageError

    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"eval --results/--baseline: cannot read {path}: {exc}") from None
    if not isinstance(payload, dict) or "suites" not in payload:
        raise UsageError(f"eval: {path} is not a file written by spade eval --out")
    return payload
