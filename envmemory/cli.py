"""The built-in memory's side of ``spade memory stats|search|export``: reads the store read-only,
safe while a run writes. The CLI module in ``spade_core`` only parses arguments."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spade_core.errors import SpadeError, UsageError


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
    print(f"memory {folder}: {counts['records']} environments "
          f"({counts['proposals']} proposals), embedder {counts['embedder']}, "
          f"text {counts['representation']}")
    print("  " + ", ".join(f"{s} {n}" for s, n in counts["by_status"].items()))
    for family, row in sorted(counts["by_family"].items()):
        print(f"  family {family}: {row['total']} ({row['mastered']} mastered)")
    manifest = counts["index_file"]
    saved = (f"{manifest['kind']} index of {manifest['ntotal']} vectors saved" if manifest
             else "no index file saved yet")
    print(f"  dedupe pool: {counts['pool']} mastered; {saved}")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from envmemory.embed import load_embedder
    from envmemory.memory import exact_search
    from envmemory.text import env_text

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
        print(f"exported {count} environments to {args.output}", file=sys.stderr)
    return 0
