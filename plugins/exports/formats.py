"""``spade envs export``: read the run's rows and write them in the
chosen format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plugins.exports.envs import ROWS_FILE, prepare_out, read_rows, write_hf_dataset, write_jsonl
from spade_core.errors import UsageError


def export_envs(run_dir: str | Path, out: str | Path, fmt: str, *,
                statuses: Sequence[str] | None = None, families: Sequence[str] | None = None,
                sandbox: str = "process") -> dict[str, Any]:
    """Export the matching environments of ``run_dir`` to ``out`` in format ``fmt``."""
    rows = read_rows(run_dir, statuses, families)
    out = Path(out)
    prepare_out(out)
    if fmt == "jsonl":
        write_jsonl(rows, out / ROWS_FILE)
    elif fmt == "hf-dataset":
        write_hf_dataset(rows, out)
    elif fmt == "verifiers":
        from plugins.exports.verifiers_export import write_package

        write_package(rows, out, sandbox=sandbox)
    elif fmt == "openenv":
        from plugins.exports.openenv_export import write_openenv

        write_openenv(rows, out, sandbox=sandbox)
    else:
        raise UsageError(f"envs export: unknown --format {fmt!r}")
    return {"out": str(out), "format": fmt, "environments": len(rows)}
