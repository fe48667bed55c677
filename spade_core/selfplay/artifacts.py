"""The run directory: resolved config, metrics, every proposed environment, and the summary.

Files are appended line by line (JSONL) or written atomically (temp file + rename), so a run that is
killed at any moment leaves every finished iteration readable.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import yaml

from spade_core.atomic_files import write_atomic


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class RunArtifacts:
    """Writes a run's files under ``run_dir``."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.envs_dir = run_dir / "envs"

    def create(self, resolved_config: dict[str, Any]) -> None:
        self.envs_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.run_dir / "config.resolved.yaml",
                     yaml.safe_dump(resolved_config, sort_keys=False))

    def append_jsonl(self, name: str, row: dict[str, Any]) -> None:
        self.append_jsonl_rows(name, [row])

    def append_jsonl_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` as lines and make them durable with one fsync (not one per line)."""
        if not rows:
            return
        with (self.run_dir / name).open("a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(row, default=_jsonable) + "\n" for row in rows))
            fh.flush()
            os.fsync(fh.fileno())

    def log_metrics(self, row: dict[str, Any]) -> None:
        self.append_jsonl("metrics.jsonl", row)

    def write_env(self, env_id: str, source: str, details: dict[str, Any]) -> None:
        """``envs/<id>.py`` (the program as written) and ``envs/<id>.json`` (everything else)."""
        write_atomic(self.envs_dir / f"{env_id}.py", source)
        write_atomic(self.envs_dir / f"{env_id}.json",
                     json.dumps(details, indent=1, default=_jsonable))

    def add_env_details(self, env_id: str, details: dict[str, Any]) -> bool:
        """Merge ``details`` into ``envs/<id>.json`` (rewritten atomically); returns whether the
        file exists."""
        path = self.envs_dir / f"{env_id}.json"
        if not path.is_file():
            return False
        data = json.loads(path.read_text(encoding="utf-8")) | details
        write_atomic(path, json.dumps(data, indent=1, default=_jsonable))
        return True

    def write_summary(self, summary: dict[str, Any]) -> None:
        write_atomic(self.run_dir / "summary.json", json.dumps(summary, indent=2,
                                                               default=_jsonable))
