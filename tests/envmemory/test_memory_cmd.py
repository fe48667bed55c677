"""``spade memory stats|search|export``: the store read while a writer holds it, and light help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from envmemory.faiss_memory import FaissEnvMemory
from envmemory.options import MemoryOptions
from spade_core.cli import main
from spade_core.records import EnvRecord

DATA = Path(__file__).parent / "data"


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in (DATA / "programs.jsonl").read_text().splitlines()]
    memory = FaissEnvMemory(tmp_path / "memory", MemoryOptions(embedder="hashing",
                                                               mastery_rollouts=2))
    for row in rows:
        if row["kind"] != "base":
            continue
        env_id = row["base"]
        memory.add(EnvRecord(id=env_id, source=row["source"], description=row["description"],
                             family="math" if "sum" in env_id else "games", status="frontier"))
        if env_id in ("digit_sum", "nim_game"):
            memory.update_stats(env_id, 0, [1, 1], [1, 1], {"regret": 0.0}, 0.0)
    memory.close()
    return tmp_path


def test_stats(run_dir: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["memory", "stats", str(run_dir), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["records"] == 20 and stats["by_status"]["mastered"] == 2
    assert stats["dedupe_index"] == 2 and stats["index_file"]["ntotal"] == 2
    assert stats["embedder"] == "hashing/384"
    assert main(["memory", "stats", str(run_dir / "memory")]) == 0
    assert "20 environments" in capsys.readouterr().out


def test_search_text_and_file(run_dir: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["memory", "search", str(run_dir), "stones pile take the last stone",
                 "-k", "3", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3 and hits[0]["id"] == "nim_game"
    program = DATA / "envs" / "caesar_decode.py"
    assert main(["memory", "search", str(run_dir), str(program), "--json",
                 "--status", "frontier"]) == 0
    hits = json.loads(capsys.readouterr().out)
    # the stored text also has a description, the file alone does not
    assert hits[0]["id"] == "caesar_decode" and hits[0]["similarity"] > 0.9
    assert all(h["status"] == "frontier" for h in hits)
    assert main(["memory", "search", str(run_dir), "digits", "--family", "math",
                 "--json"]) == 0
    assert {h["family"] for h in json.loads(capsys.readouterr().out)} == {"math"}


def test_export_jsonl(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["memory", "export", str(run_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 20 and "embedding" not in rows[0]
    nim = next(r for r in rows if r["id"] == "nim_game")
    assert nim["status"] == "mastered" and nim["history"][0]["unhinted"] == [1.0, 1.0]
    out = tmp_path / "out.jsonl"
    assert main(["memory", "export", str(run_dir), "-o", str(out), "--embeddings"]) == 0
    assert len(json.loads(out.read_text().splitlines()[0])["embedding"]) == 384


def test_missing_memory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["memory", "stats", str(tmp_path)]) == 2
    assert "no environment memory" in capsys.readouterr().err


def test_stats_reads_while_a_writer_holds_the_memory(run_dir: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    writer = FaissEnvMemory(run_dir / "memory", MemoryOptions(embedder="hashing"))
    try:
        assert main(["memory", "stats", str(run_dir), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["records"] == 20
    finally:
        writer.close()


def test_help_does_not_import_heavy_libraries() -> None:
    code = ("import sys; from spade_core.cli import build_parser; build_parser(); "
            "print([m for m in ('faiss', 'torch', 'sentence_transformers', 'transformers') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"

