"""``spade doctor [--json]``: what isolation the sandbox actually gets on this machine.

Starts the sandbox plugin with its default options, runs one tiny environment through the full
validation, and prints the isolation report (method, namespaces seen from inside, worker uids,
rlimits, time limits). Exit status 0 when programs run isolated and the probe passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys



def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check the sandbox's isolation on this machine",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--sandbox", default="process", metavar="NAME",
                   help="sandbox plugin to check (default: process)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spade_core.plugins import load_plugins
    from spade_core.validation import PROBE_PROGRAM, validate

    tools = {name: shutil.which(name) for name in ("bwrap", "unshare")}
    sandbox = load_plugins().registry.build("sandbox", args.sandbox, {}, "--sandbox")
    try:
        report = sandbox.isolation()
        [verdict] = validate(sandbox, [PROBE_PROGRAM])
    finally:
        sandbox.close()
    healthy = bool(report.get("isolated")) and verdict.valid
    result = {"healthy": healthy, "tools": tools, "isolation": report,
              "probe": {"valid": verdict.valid, "category": verdict.category,
                        "message": verdict.message, "seconds": round(verdict.seconds, 3)}}
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print(f"sandbox {args.sandbox!r}: isolation {report.get('method')} "
              f"({'isolated' if report.get('isolated') else 'NOT ISOLATED'})")
        print(f"  network: {report.get('network')}")
        print(f"  filesystem: {report.get('filesystem')}")
        print(f"  worker uid drop: {report.get('worker_uid_drop')}  rlimits: "
              f"{report.get('rlimits')}")
        for note in report.get("notes", []):
            print(f"  note: {note}")
        found = ", ".join(f"{name}={path or 'missing'}" for name, path in tools.items())
        print(f"  tools: {found}")
        print(f"  probe environment: {verdict.category} ({verdict.seconds:.2f} s)")
        print("healthy" if healthy else "NOT healthy", file=sys.stderr)
    return 0 if healthy else 1
