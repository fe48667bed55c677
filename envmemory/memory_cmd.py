"""``spade memory stats|search|export RUN_DIR``: reads the built-in memory's store read-only, safe
while a run writes. Registered by :mod:`envmemory.plugin` through the ``register_commands`` hook;
importing this module is light (the store, FAISS and the embedders load inside the actions)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spade_core.errors import SpadeError, UsageError
from spade_core.messages import plural


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``spade memory`` sub-commands and their options."""
    msub = parser.add_subparsers(dest="memory_command", metavar="ACTION", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("run_dir", metavar="RUN_DIR",
                       help="run directory (or the memory folder itself)")
        q.add_argument("--memory-path", default="memory",
                       help="memory folder inside RUN_DIR (default: memory)")

    stats = msub.add_parser("stats", help="counts by status and family, index state",
                            description="Count a run's stored environments by status and by "
                                        "family, with the embedder, the text representation "
                                        "and the state of the search index.")
    common(stats)
    stats.add_argument("--json", action="store_true", help="print one JSON object")

    search = msub.add_parser("search", help="nearest stored environments to a text or a file",
                             description="The stored environments nearest to a text or to an "
                                         "environment program, in the memory's embedding "
                                         "space.")
    common(search)
    search.add_argument("query", metavar="TEXT_OR_FILE",
                        help="free text, or a file holding an environment program")
    search.add_argument("-k", type=int, default=5, help="how many results (default 5)")
    search.add_argument("--status", action="append",
                        help="only records with this status (repeatable)")
    search.add_argument("--family", help="only records of this family")
    search.add_argument("--json", action="store_true", help="print a JSON list")

    export = msub.add_parser("export", help="every record as JSON lines",
                             description="Write every stored environment record as JSON lines "
                                         "(history included), to stdout or --output.")
    common(export)
    export.add_argument("-o", "--output", help="write to this file instead of stdout")
    export.add_argument("--embeddings", action="store_true", help="include embedding vectors")


def run(args: argparse.Namespace) -> int:
    """Run the action ``add_arguments`` parsed (``args.memory_command``)."""
    actions = {"stats": run_stats, "search": run_search, "export": run_export}
    return actions[args.memory_command](args)


def _folder(args: argparse.Namespace) -> Path:
    from envmemory.store import DB_NAME

    base = Path(args.run_dir)
    for candidate in (base, base / args.memory_path):
        if (candidate / DB_NAME).is_file():
            return candidate
    raise UsageError(f"no environment memory in {base} (looked for {DB_NAME} there and in "
                     f"{base / args.memory_path}); pass a run directory or a memory folder")


def _open(args: argparse.Namespace) -> Any:
    from envmemory.store import RecordStore

    try:
        return RecordStore(_folder(args), readonly=True)
    except Exception as exc:  # noqa: BLE001 - sqlite errors become a one-line message
        if isinstance(exc, SpadeError):
            raise
        raise SpadeError(f"cannot read the memory at {args.run_dir}: {exc}") from exc


def _summary(record: Any) -> dict[str, Any]:
    return {"id": record.id, "family": record.family, "status": record.status,
            "description": record.description, "regret": record.stats.get("regret"),
            "win_rate": record.stats.get("win_rate"), "duplicate_of": record.duplicate_of}


def run_stats(args: argparse.Namespace) -> int:
    from envmemory.index import IndexFiles

    folder = _folder(args)
    store = _open(args)
    try:
        counts = store.counts()
        counts["embedder"] = store.meta("embedder")
        counts["representation"] = store.meta("representation")
        counts["index_file"] = IndexFiles(folder, counts["embedder"] or "").manifest()
        counts["folder"] = str(folder)
    finally:
        store.close()
    if args.json:
        print(json.dumps(counts, indent=1))
        return 0
    print(f"memory {folder}: {plural(counts['records'], 'environment')} "
          f"({plural(counts['proposals'], 'proposal')}), embedder {counts['embedder']}, "
          f"text {counts['representation']}")
    print("  " + ", ".join(f"{s} {n}" for s, n in counts["by_status"].items()))
    for family, row in sorted(counts["by_family"].items()):
        print(f"  family {family}: {row['total']} ({row['mastered']} mastered)")
    manifest = counts["index_file"]
    saved = (f"{manifest['kind']} index of {manifest['ntotal']} vectors saved" if manifest
             else "no index file saved yet")
    print(f"  dedupe index: {counts['dedupe_index']} mastered; {saved}")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from envmemory.embed import load_embedder
    from envmemory.faiss_memory import exact_search
    from envmemory.representation import env_text

    if args.k < 1:
        raise UsageError("memory search: -k must be at least 1")
    store = _open(args)
    try:
        spec = json.loads(store.meta("embedder_spec") or "null")
        if not spec:
            raise SpadeError("the memory does not say which embedder built it; nothing to search")
        embedder = load_embedder(spec["name"], spec.get("options"))
        path = Path(args.query)
        if path.is_file():
            text = env_text(path.read_text(), "", store.meta("representation") or "task")
        else:
            text = args.query
        hits = exact_search(store, embedder.embed([text])[0], args.k, args.status, args.family)
    finally:
        store.close()
    rows = [{**_summary(r), "similarity": round(s, 4)} for r, s in hits]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for row in rows:
        print(f"{row['similarity']:.3f}  {row['id']}  {row['status']:<9} {row['family']:<12} "
              f"{row['description'][:60]}")
    if not rows:
        print("no matching environments")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    store = _open(args)
    out = open(args.output, "w") if args.output else sys.stdout  # noqa: SIM115
    count = 0
    try:
        for record in store.records():
            row = asdict(record)
            if not args.embeddings:
                row.pop("embedding", None)
            out.write(json.dumps(row) + "\n")
            count += 1
    finally:
        store.close()
        if args.output:
            out.close()
    if args.output:
        print(f"exported {plural(count, 'environment')} to {args.output}", file=sys.stderr)
    return 0
