"""``spade plugins``: every installed component and plugin command, and every plugin (or
registration) that failed."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spade_core.plugins import LoadedPlugins


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list installed plugins, their components and commands",
                       description="List every component and command the installed plugins "
                                   "register (kind, name, plugin, distribution, version, "
                                   "summary), and the plugins that failed to load with their "
                                   "error. SPADE_PLUGINS limits which plugins load.")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=run)


def plugin_rows(plugins: "LoadedPlugins | None" = None) -> list[dict[str, Any]]:
    """One row per component, per plugin command (kind ``command``, name ``memory`` or
    ``bench sandbox``), per refused command and per failed plugin, sorted by kind and name.
    ``plugins``: these instead of the installed ones."""
    from spade_core.cli import load_commands
    from spade_core.components import KIND_BY_NAME
    from spade_core.plugins import load_plugins

    loaded = plugins if plugins is not None else load_plugins()
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
    commands = load_commands(loaded)
    for command in commands.commands.values():
        rows.append({
            "name": command.path, "kind": "command", "plugin": command.plugin,
            "distribution": command.distribution, "version": command.version,
            "summary": command.help, "error": None,
        })
    for problem in commands.problems:
        rows.append({
            "name": problem.name, "kind": "command", "plugin": problem.plugin,
            "distribution": problem.distribution, "version": problem.version, "summary": "",
            "error": problem.error,
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
    rows = plugin_rows(getattr(args, "_plugins", None))
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
