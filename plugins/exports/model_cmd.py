"""``spade export-model RUN_DIR --out DIR [--merge] [--checkpoint N]``: the run's trained model as
a ``save_pretrained`` folder other tools load with ``transformers`` (or ``peft``).

Without ``--merge`` the folder holds the LoRA adapter (``adapter_config.json`` naming the base
model folder written next to it, ``base/``) plus the tokenizer; with ``--merge`` the adapter is
folded into the base weights and the folder is a plain model. A run trained without LoRA exports
its full weights either way. Every export has the tokenizer with its chat template and a
``README.md`` model card with the run's config and figures."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory with checkpoints/")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder to write (must not exist, or be empty)")
    parser.add_argument("--merge", action="store_true",
                        help="fold the LoRA adapter into the base weights (a plain model)")
    parser.add_argument("--checkpoint", type=int, default=None, metavar="N",
                        help="iteration N's checkpoint (iterations count from 0): the one taken "
                        "when it completed, folder checkpoints/iter-(N+1) (default: the latest)")
    parser.add_argument("--model", default=None, metavar="SPEC",
                        help="base model spec (default: the run config's model.path)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")


def run(args: argparse.Namespace) -> int:
    from plugins.exports.model_export import export_model

    result = export_model(args.run_dir, args.out, merge=args.merge, checkpoint=args.checkpoint,
                          model=args.model)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"exported {result['kind']} from {result['checkpoint']} to {result['out']}")
    print(f"# base model: {result['base_model']}", file=sys.stderr)
    return 0
