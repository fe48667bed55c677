"""``spade envs import``: SPADE-format programs (a folder or a JSONL) into a run's memory as a
fixed pool, each with a verdict; then registered with gymnasium from that memory."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily
from spade_core.program_files import choose_family, read_programs
from spade_core.errors import UsageError

FAMILIES = [ReasoningFamily(), ToolUseFamily()]
BROKEN = "class BrokenEnv:\n    def reset(self, seed=None):\n        return '', {}\n"
HASHING = json.dumps({"embedder": "hashing"})


def seed_sources() -> dict[str, str]:
    return {p.description.split(":")[0]: p.source for f in FAMILIES for p in f.seed_programs()
            if "math_verify" not in p.source}


def test_read_programs_from_a_folder_and_a_jsonl(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("x = 1\n")
    (tmp_path / "a.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not a program")
    assert [label.rsplit("/", 1)[1] for label, _, _ in read_programs(tmp_path)] == ["a.py", "b.py"]
    jsonl = tmp_path / "pool.jsonl"
    jsonl.write_text(json.dumps({"game_code": "z = 3", "game_name": "zed"}) + "\n\n"
                     + json.dumps({"code": "w = 4"}) + "\n")
    rows = list(read_programs(jsonl))
    assert [(r[1], r[2]) for r in rows] == [("z = 3", "zed"), ("w = 4", "")]
    assert rows[0][0].endswith("pool.jsonl:1") and rows[1][0].endswith("pool.jsonl:3")
    chosen = tmp_path / "two.jsonl"
    chosen.write_text(json.dumps({"code": "a = 1", "patched": "a = 2"}) + "\n")
    assert [r[1] for r in read_programs(chosen, field="patched")] == ["a = 2"]
    with pytest.raises(UsageError, match="no code field"):
        list(read_programs(jsonl, field="missing"))
    with pytest.raises(UsageError, match="no such file"):
        list(read_programs(tmp_path / "nope.jsonl"))


def test_family_is_chosen_by_static_checks():
    sources = seed_sources()
    assert choose_family(sources["file_organizer"], FAMILIES)[0].name == "tool-use"
    assert choose_family(sources["grid_escape"], FAMILIES)[0].name == "reasoning"
    family, problems = choose_family(BROKEN, FAMILIES)
    assert family is None and len(problems) == 2 and problems[1].startswith("tool-use:")


@pytest.fixture(scope="module")
def imported_run(tmp_path_factory):
    from spade_core.plugins import load_plugins

    if ("sandbox", "process") not in load_plugins().registry.components:
        pytest.skip("no sandbox named 'process' is registered yet")
    from fakes.cli import run_spade

    root = tmp_path_factory.mktemp("import")
    folder = root / "programs"
    folder.mkdir()
    for name, source in seed_sources().items():
        (folder / f"{name}.py").write_text(source)
    (folder / "broken.py").write_text(BROKEN)
    run_dir = root / "run"
    result = run_spade("envs", "import", str(folder), "--run-dir", str(run_dir),
                       "--memory-options", HASHING, "--json", timeout=180)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return run_dir, result, rows


@pytest.mark.slow
def test_folder_import_gives_every_program_a_verdict(imported_run):
    run_dir, result, rows = imported_run
    assert result.returncode == 1, result.stderr  # the broken program is invalid
    by_name = {Path(r["program"]).stem: r for r in rows}
    assert len(by_name) == len(seed_sources()) + 1
    assert by_name["broken"]["valid"] is False and by_name["broken"]["status"] == "rejected"
    assert all(r["valid"] and r["status"] == "frontier" for n, r in by_name.items()
               if n != "broken")
    assert by_name["calendar_booking"]["family"] == "tool-use"
    assert by_name["code_breaker"]["family"] == "reasoning"
    from fakes.cli import run_spade
    stats = json.loads(run_spade("memory", "stats", str(run_dir), "--json").stdout)
    assert stats["by_status"]["frontier"] == len(seed_sources())
    assert stats["by_status"]["rejected"] == 1


@pytest.mark.slow
def test_jsonl_import_and_usage_errors(tmp_path, imported_run):
    from fakes.cli import run_spade

    sources = seed_sources()
    jsonl = tmp_path / "pool.jsonl"
    jsonl.write_text("".join(json.dumps({"code": sources[n], "skill": n}) + "\n"
                             for n in ("modular_power", "product_order")))
    run_dir = tmp_path / "run"
    ok = run_spade("envs", "import", str(jsonl), "--run-dir", str(run_dir),
                   "--memory-options", HASHING, timeout=180)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 valid, 0 invalid" in ok.stderr
    bad = run_spade("envs", "import", str(jsonl), "--run-dir", str(run_dir), "--field", "nope")
    assert bad.returncode == 2 and "no code field" in bad.stderr
    bad = run_spade("envs", "import", str(jsonl), "--run-dir", str(run_dir),
                    "--memory-options", "[1]")
    assert bad.returncode == 2 and "JSON object" in bad.stderr


@pytest.mark.slow
def test_run_memory_registers_with_gymnasium(imported_run):
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    from spade_core.gym_registry import SharedSandbox, register_run_memory

    run_dir, _, rows = imported_run
    sandbox = SharedSandbox()
    ids = register_run_memory(run_dir, sandbox_factory=sandbox)
    try:
        assert len(ids) == sum(1 for r in rows if r["valid"])
        assert all(i.startswith("spade/") and i.endswith("-v0") for i in ids)
        tool_id = next(i for i in ids if "/tool-use-" in i)
        env = gymnasium.make(tool_id)
        observation, info = env.reset(seed=4)
        assert observation and info["tools"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
        env.close()
    finally:
        for i in ids:
            gymnasium.registry.pop(i, None)
        sandbox.close()
