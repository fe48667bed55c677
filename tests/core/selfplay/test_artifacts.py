"""The run directory's writer (spade_core.selfplay.artifacts): the resolved config, metrics
appended line by line, environment files, and the summary replaced whole."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from spade_core.selfplay.artifacts import RunArtifacts


@dataclass
class _Figures:
    regret: float


def test_a_run_directorys_files(tmp_path):
    artifacts = RunArtifacts(tmp_path / "run")
    artifacts.create({"run": {"seed": 1}})
    assert yaml.safe_load((tmp_path / "run" / "config.resolved.yaml").read_text()) == \
        {"run": {"seed": 1}}
    artifacts.log_metrics({"iteration": 0, "figures": _Figures(0.5), "dir": Path("/x")})
    artifacts.log_metrics({"iteration": 1})
    artifacts.append_jsonl_rows("replays.jsonl", [])  # nothing: no file
    rows = [json.loads(line) for line in
            (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert rows == [{"iteration": 0, "figures": {"regret": 0.5}, "dir": "/x"}, {"iteration": 1}]
    assert not (tmp_path / "run" / "replays.jsonl").exists()

    artifacts.write_env("abc", "class A: ...", {"status": "frontier"})
    assert (artifacts.envs_dir / "abc.py").read_text() == "class A: ..."
    assert artifacts.add_env_details("abc", {"delayed": {"trained": True}})
    assert json.loads((artifacts.envs_dir / "abc.json").read_text()) == \
        {"status": "frontier", "delayed": {"trained": True}}
    assert not artifacts.add_env_details("missing", {"x": 1})

    artifacts.write_summary({"status": "running"})
    artifacts.write_summary({"status": "completed"})
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == {"status": "completed"}
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == \
        ["config.resolved.yaml", "envs", "metrics.jsonl", "summary.json"]  # no temporary file
