"""'spade doctor [--json]': what isolation the sandbox gets on this machine, and the versions
of the libraries a bug report needs.

Prints the versions of Python, torch, transformers, trl, accelerate, deepspeed, vllm, faiss,
peft, ray, openai, datasets, math-verify, reasoning-gym and bubblewrap ("not
installed" for those missing), read from the installed packages' metadata without importing
them. Checks that the model can be found (--model, default the bundled model), through the
generation backend's own preflight (--backend, default transformers): nothing is loaded or
downloaded. Then starts the sandbox plugin with its default options, runs one tiny environment
through the full validation, and prints the isolation report (method, namespaces seen from
inside, worker uids, rlimits, time limits). Exit status 0 when the model is found, programs run
isolated and the probe passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
from importlib import metadata

#: Libraries whose versions a bug report needs -> the distributions that provide them (the first
#: installed one is reported: faiss comes as faiss-cpu or faiss-gpu-*).
LIBRARIES: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "transformers": ("transformers",),
    "trl": ("trl",),
    "accelerate": ("accelerate",),
    "deepspeed": ("deepspeed",),
    "vllm": ("vllm",),
    "faiss": ("faiss-cpu", "faiss-gpu", "faiss-gpu-cu12", "faiss-gpu-cu11", "faiss"),
    "peft": ("peft",),
    "ray": ("ray",),
    "openai": ("openai",),
    "datasets": ("datasets",),
    "math-verify": ("math-verify",),
    "reasoning-gym": ("reasoning-gym", "reasoning_gym"),
}
NOT_INSTALLED = "not installed"


def _distribution_version(names: tuple[str, ...]) -> str:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return NOT_INSTALLED


def _bubblewrap_version() -> str:
    path = shutil.which("bwrap")
    if path is None:
        return NOT_INSTALLED
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return out.stdout.strip().removeprefix("bubblewrap ").strip() or "unknown"


def versions() -> dict[str, str]:
    """Python's version and each library's ("not installed" when missing), without importing the
    libraries: their installed metadata says it."""
    found = {"python": platform.python_version(), "spade-rl": _distribution_version(("spade-rl",))}
    found.update({name: _distribution_version(dists) for name, dists in LIBRARIES.items()})
    found["bubblewrap"] = _bubblewrap_version()
    return found



def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="library versions, and the sandbox's isolation here",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--sandbox", default="process", metavar="NAME",
                   help="sandbox plugin to check (default: process)")
    p.add_argument("--model", default=None, metavar="SPEC",
                   help="model to look for, as model.path takes it (default: the bundled "
                        "model, model.path's default)")
    p.add_argument("--backend", default="transformers", metavar="NAME",
                   help="generation backend whose preflight looks for the model (default: "
                        "transformers)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spade_core.api import load_plugins, model_problems, probe_sandbox
    from spade_core.config.schema import ModelSection

    found_versions = versions()
    tools = {name: shutil.which(name) for name in ("bwrap", "unshare")}
    loaded = getattr(args, "_plugins", None) or load_plugins()
    spec = args.model or ModelSection().path
    missing_model = model_problems(spec, args.backend, loaded)
    report, verdict = probe_sandbox(args.sandbox, loaded)
    healthy = bool(report.get("isolated")) and verdict.valid and not missing_model
    result = {"healthy": healthy, "versions": found_versions, "tools": tools,
              "model": {"spec": spec, "backend": args.backend, "found": not missing_model,
                        "problems": missing_model},
              "isolation": report,
              "probe": {"valid": verdict.valid, "category": verdict.category,
                        "message": verdict.message, "seconds": round(verdict.seconds, 3)}}
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print("versions: " + ", ".join(f"{name} {version}"
                                       for name, version in found_versions.items()))
        print(f"model {spec}: " + ("found" if not missing_model else
                                   "NOT FOUND: " + "; ".join(missing_model)))
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
