"""The built-in formats of ``spade envs export`` (component kind ``export_format``, registered by
:mod:`plugins.exports.plugin` like a third-party format), and :func:`export_envs`, which reads a
run's rows and writes them in the chosen one."""

from __future__ import annotations

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
    """An installable package ``spade_envs`` whose ``load_environment()`` returns a verifiers
    environment over the rows, playing them in ``sandbox``."""

    def write(self, rows: list[dict[str, Any]], out: Path, *, sandbox: str) -> None:
        from plugins.exports.verifiers_export import write_package

        write_package(rows, out, sandbox=sandbox)


class OpenEnvFormat(ExportFormat):
    """An OpenEnv environment folder (``openenv.yaml``, the rows, ``server/app.py``) playing the
    rows in ``sandbox``."""

    def write(self, rows: list[dict[str, Any]], out: Path, *, sandbox: str) -> None:
        from plugins.exports.openenv_export import write_openenv

        write_openenv(rows, out, sandbox=sandbox)


def export_envs(run_dir: str | Path, out: str | Path, fmt: str, *,
                statuses: Sequence[str] | None = None, families: Sequence[str] | None = None,
                sandbox: str = "process", registry: Any = None) -> dict[str, Any]:
    """Export the matching environments of ``run_dir`` to ``out`` in the export format named
    ``fmt`` (of ``registry``, by default that of the installed plugins)."""
    if registry is None:
        from spade_core.plugins import load_plugins

        registry = load_plugins().registry
    exporter = registry.build("export_format", fmt, {}, "envs export --format")
    try:
        rows = read_rows(run_dir, statuses, families)
        out = Path(out)
        prepare_out(out)
        exporter.write(rows, out, sandbox=sandbox)
    finally:
        exporter.close()
    return {"out": str(out), "format": fmt, "environments": len(rows)}
