"""``spade experiment EXPERIMENT.yaml [--out DIR]``: run every arm x seed of an experiment file as
ordinary runs, evaluate them on the held-out suites, and write ``results.json``; running it again
continues where it stopped (``docs/experiments.md``)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("experiment", help="compare arms of a config over seeds at equal compute",
                       description="Run every arm x seed of an experiment file (docs/"
                                   "experiments.md) as ordinary run directories, with held-out "
                                   "evaluation, and write results.json: each arm's score "
                                   "against compute and its difference to the reference arm "
                                   "with a 95 % interval over seeds. Running it again resumes: "
                                   "completed runs are skipped, unfinished ones resumed.")
    p.add_argument("experiment", help="the experiment file (e.g. experiments/"
                                      "cpu-spade-vs-fixed.yaml)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="the experiment folder (default runs/experiments/NAME)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="runs at once, each in a local process of its own (default: the "
                        "file's workers, else 1: one after another)")
    p.add_argument("--check", action="store_true",
                   help="validate the file and every arm's config, print the runs, run nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from spade_core.experiment.runner import prepare, run_experiment

    if args.check:
        spec, base, _, folder, runs, _ = prepare(args.experiment, args.out,
                                                 getattr(args, "_plugins", None))
        print(json.dumps({"experiment": spec.name, "base": str(base), "folder": str(folder),
                          "runs": [{"arm": r.arm, "seed": r.seed, "dir": str(r.dir),
                                    "overrides": r.overrides} for r in runs]}, indent=1))
        return 0
    if args.workers is not None and args.workers < 1:
        from spade_core.errors import ConfigError

        raise ConfigError(f"--workers {args.workers}: give 1 or more runs at once")
    run_experiment(args.experiment, args.out, plugins=getattr(args, "_plugins", None),
                   workers=args.workers)
    return 0
