"""'spade seeds FAMILY --out PATH [--options JSON]': write a family's seed programs to files.

Each program the family's seed_programs() gives (for reasoning-gym: one per selected
dataset) becomes one .py file in the folder PATH, or one line of PATH when it ends in
.jsonl (fields code, description, family). The result is what 'spade envs import
PATH --family FAMILY --run-dir DIR' turns into a fixed pool, and what loop.pool accepts
directly. Existing files are kept unless '--force'. Exit status 0, or 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from spade_core.messages import plural


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("seeds", help="write a family's seed programs to files (a fixed pool)",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("family", metavar="FAMILY", help="env family, e.g. reasoning-gym")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="folder for one .py file per program, or a .jsonl file")
    p.add_argument("--options", default="{}", metavar="JSON",
                   help="the family's options as a JSON object, e.g. "
                   "'{\"categories\": [\"arithmetic\"], \"exclude\": [\"gsm_symbolic\"]}'")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=run)


def file_stem(description: str, fallback: str) -> str:
    """A file name from a program description (``"leg_counting: ..."`` -> ``leg_counting``)."""
    head = description.split(":", 1)[0].strip().lower()
    stem = re.sub(r"[^a-z0-9_\-]+", "_", head).strip("_")[:80]
    return stem or fallback


def run(args: argparse.Namespace) -> int:
    from spade_core.cli.envs_cmd import json_object_option
    from spade_core.components import BuildContext
    from spade_core.errors import UsageError
    from spade_core.plugins import load_plugins

    options = json_object_option(args.options, "seeds: --options")
    registry = load_plugins().registry
    family = registry.build("env_family", args.family, options, "FAMILY", BuildContext())
    programs = list(family.seed_programs())
    if not programs:
        raise UsageError(f"seeds: family {args.family!r} has no seed programs with these options")
    out = Path(args.out)
    if out.suffix == ".jsonl":
        if out.exists() and not args.force:
            raise UsageError(f"seeds: {out} exists; use --force to overwrite it")
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            for program in programs:
                handle.write(json.dumps({"code": program.source, "description":
                                         program.description, "family": family.name},
                                        ensure_ascii=False) + "\n")
        print(f"{out}: {plural(len(programs), 'program')}")
        return 0
    if out.exists() and not out.is_dir():
        raise UsageError(f"seeds: {out} is a file; give a folder or a .jsonl path")
    out.mkdir(parents=True, exist_ok=True)
    written, taken = 0, set()
    for program in programs:
        stem = file_stem(program.description, program.id[:12])
        while stem in taken:
            stem += "_"
        taken.add(stem)
        path = out / f"{stem}.py"
        if path.exists() and not args.force:
            print(f"{path}: exists, kept (use --force to overwrite)", file=sys.stderr)
            continue
        path.write_text(program.source, encoding="utf-8")
        written += 1
        print(path)
    print(f"# wrote {written} of {plural(len(programs), family.name + ' program')} to {out}",
          file=sys.stderr)
    return 0
