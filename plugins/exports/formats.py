"""The built-in formats of ``spade envs export`` (component kind ``export_format``, registered by
:mod:`plugins.exports.plugin` like a third-party format), and :func:`export_envs`, which reads a
run's rows and writes them in the chosen one."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plugins.exports.envs import ROWS_FILE, prepare_out, read_rows, write_hf_dataset, write_jsonl
from spade_core.interfaces import ExportFormat


class JsonlFormat(ExportFormat):
    """``DIR/environments.jsonl``, one environment per line."""

    def write(self, rows: list[dict[str, Any]], out: Path, *, sandbox: str) -> None:
        write_jsonl(rows, out / ROWS_FILE)


class HfDatasetFormat(ExportFormat):
    """The rows as a ``datasets`` dataset saved with ``save_to_disk``."""

    def write(self, rows: list[dict[str, Any]], out: Path, *, sandbox: str) -> None:
        write_hf_dataset(rows, out)


class VerifiersFormat(ExportFormat):
    """An installable package (import name ``name``) whose ``load_environment()`` returns a
    verifiers environment over the rows, playing them in ``sandbox``."""

    def __init__(self, name: str = "spade_envs") -> None:
        self.name = name

    def write(self, rows: list[dict[str, Any]], out: Path, *, sandbox: str) -> None:
        from plugins.exports.verifiers_export import write_package

        write_package(rows, out, sandbox=sandbox, package=self.name)


class OpenEnvFormat(ExportFormat):
    """An OpenEnv environment folder (``openenv.yaml``, the rows, ``server/app.py``) playing the
    rows in ``sandbox``."""

    def write(self, rows: list[dict[str, Any]], out: Path, *, sandbox: str) -> None:
        from plugins.exports.openenv_export import write_openenv

        write_openenv(rows, out, sandbox=sandbox)


def package_name(run_dir: str | Path) -> str:
    """The default name of an exported package: ``spade_`` + the run's name (``run.name`` of its
    ``config.resolved.yaml``, else the folder's name) + ``_iter`` + its latest finished iteration
    (the last row of ``metrics.jsonl``, when there is one), as a Python identifier."""
    from spade_core.config.yaml_safe import load_yaml_text

    run_dir = Path(run_dir)
    name = run_dir.resolve().name
    config = run_dir / "config.resolved.yaml"
    if config.is_file():
        data = load_yaml_text(config.read_bytes(), str(config))
        name = str(((data or {}).get("run") or {}).get("name") or name)
    metrics = run_dir / "metrics.jsonl"
    lines = metrics.read_text().splitlines() if metrics.is_file() else []
    if lines and lines[-1].strip():
        name += f"_iter{int(json.loads(lines[-1])['iteration'])}"
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9_]", "_", f"spade_{name}".lower())).rstrip("_")


def export_envs(run_dir: str | Path, out: str | Path, fmt: str, *,
                statuses: Sequence[str] | None = None, families: Sequence[str] | None = None,
                sandbox: str = "process", registry: Any = None,
                name: str | None = None) -> dict[str, Any]:
    """Export the matching environments of ``run_dir`` to ``out`` in the export format named
    ``fmt`` (of ``registry``, by default that of the installed plugins). A format with a ``name``
    option (``verifiers``: the package's import name) gets ``name``, by default
    :func:`package_name`, so that two exports install side by side; ``name`` for a format
    without that option is an error."""
    from spade_core.errors import UsageError

    if registry is None:
        from spade_core.plugins import load_plugins

        registry = load_plugins().registry
    component = registry.resolve("export_format", fmt, "envs export --format")
    options: dict[str, Any] = {}
    if component.options is not None and "name" in getattr(component.options, "model_fields", {}):
        options["name"] = name or package_name(run_dir)
    elif name is not None:
        raise UsageError(f"envs export --name: the {fmt!r} format writes no named package "
                         "(--name is for verifiers)")
    exporter = registry.build("export_format", fmt, options, "envs export --format")
    try:
        rows = read_rows(run_dir, statuses, families)
        out = Path(out)
        prepare_out(out)
        exporter.write(rows, out, sandbox=sandbox)
    finally:
        exporter.close()
    result = {"out": str(out), "format": fmt, "environments": len(rows)}
    if "name" in options:
        result["name"] = options["name"]
    return result
