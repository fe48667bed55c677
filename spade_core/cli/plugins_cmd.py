"""``spade plugins``: every installed component and every plugin that failed to load."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list installed plugins and their components")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=run)


def plugin_rows() -> list[dict[str, Any]]:
    """One row per component (and per failed plugin), sorted by kind and name."""
    from spade_core.components import KIND_BY_NAME
    from spade_core.plugins import load_plugins

    loaded = load_plugins()
    rows: list[dict[str, Any]] = []
    for component in loaded.registry.components.values():
        rows.append({
            "name": component.name, "kind": component.kind, "plugin": component.plugin,
            "distribution": component.distribution, "version": component.version,
            "summary": component.summary, "error": None,
        })
    for (kind, name), clash in loaded.registry.conflicts.items():
        owners = " and ".join(c.distribution for c in clash)
        for component in clash:
            rows.append({
                "name": name, "kind": kind, "plugin": component.plugin,
                "distribution": component.distribution, "version": component.version,
                "summary": component.summary,
                "error": f"duplicate {KIND_BY_NAME[kind].label} name, registered by {owners}",
            })
    for info in loaded.plugins:
        if info.error:
            rows.append({
                "name": info.name, "kind": None, "plugin": info.name,
                "distribution": info.distribution, "version": info.version, "summary": "",
                "error": info.error,
            })
    rows.sort(key=lambda r: (r["kind"] or "~", r["name"], r["distribution"]))
    return rows


def run(args: argparse.Namespace) -> int:
    rows = plugin_rows()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max([len(r["name"]) for r in rows] + [4])
    for row in rows:
        if row["error"]:
            print(f"{'FAILED':<22} {row['name']:<{width}}  {row['distribution']} "
                  f"{row['version']}: {row['error']}")
        else:
            print(f"{row['kind']:<22} {row['name']:<{width}}  {row['distribution']} "
                  f"{row['version']}  {row['summary']}")
    if not rows:
        print("no plugins loaded (is SPADE_PLUGINS set?)")
    return 0
