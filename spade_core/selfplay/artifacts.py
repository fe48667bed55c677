"""The run directory: resolved config, metrics, every proposed environment, and the summary.

Files are appended line by line (JSONL) or written atomically (temp file + rename), so a run that is
killed at any moment leaves every finished iteration readable. A write that finds the disk full
leaves the file as it was (an append is cut back to its old end) and raises
:class:`~spade_core.disk_space.DiskFullError` naming the file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import yaml

from spade_core.atomic_files import append_whole, write_atomic
from spade_core.disk_space import writing
from spade_core.messages import plural


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class RunArtifacts:
    """Writes a run's files under ``run_dir`` (``sync``: each write fsynced, ``run.fsync``)."""

    def __init__(self, run_dir: Path, sync: bool = True) -> None:
        self.run_dir = run_dir
        self.envs_dir = run_dir / "envs"
        self.sync = sync

    def create(self, resolved_config: dict[str, Any]) -> None:
        with writing(self.envs_dir, "the run directory's envs/ folder"):
            self.envs_dir.mkdir(parents=True, exist_ok=True)
        self._write(self.run_dir / "config.resolved.yaml", "the run's resolved config",
                    yaml.safe_dump(resolved_config, sort_keys=False))

    def _write(self, path: Path, what: str, text: str) -> None:
        """``path`` replaced whole by ``text`` (:func:`write_atomic`); a full disk leaves it
        as it was."""
        data = text.encode("utf-8")
        with writing(path, what, len(data)):
            write_atomic(path, data, self.sync)

    def append_jsonl(self, name: str, row: dict[str, Any]) -> None:
        self.append_jsonl_rows(name, [row])

    def append_jsonl_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` as lines and make them durable with one fsync (not one per line)."""
        if not rows:
            return
        path = self.run_dir / name
        data = "".join(json.dumps(row, default=_jsonable) + "\n" for row in rows).encode("utf-8")
        with writing(path, f"{plural(len(rows), 'line')} of {name}", len(data)):
            append_whole(path, data, self.sync)

    def log_metrics(self, row: dict[str, Any]) -> None:
        self.append_jsonl("metrics.jsonl", row)

    def write_env(self, env_id: str, source: str, details: dict[str, Any]) -> None:
        """``envs/<id>.py`` (the program as written) and ``envs/<id>.json`` (everything else).
        The same program proposed again (a family that writes one program per choice, a
        refused duplicate) replaces ``<id>.json``; the record it replaces is kept as a line of
        ``envs/<id>.history.jsonl`` first, so no proposal's record is lost."""
        earlier = self.envs_dir / f"{env_id}.json"
        if earlier.is_file():
            self.append_jsonl(f"envs/{env_id}.history.jsonl",
                              json.loads(earlier.read_text(encoding="utf-8")))
        self._write(self.envs_dir / f"{env_id}.py", f"environment {env_id}'s program", source)
        self._write(self.envs_dir / f"{env_id}.json", f"environment {env_id}'s details",
                    json.dumps(details, indent=1, default=_jsonable))

    def add_env_details(self, env_id: str, details: dict[str, Any]) -> bool:
        """Merge ``details`` into ``envs/<id>.json`` (rewritten atomically); returns whether the
        file exists."""
        path = self.envs_dir / f"{env_id}.json"
        if not path.is_file():
            return False
        data = json.loads(path.read_text(encoding="utf-8")) | details
        self._write(path, f"environment {env_id}'s details",
                    json.dumps(data, indent=1, default=_jsonable))
        return True

    def write_summary(self, summary: dict[str, Any]) -> None:
        self._write(self.run_dir / "summary.json", "the run's summary",
                    json.dumps(summary, indent=2, default=_jsonable))
