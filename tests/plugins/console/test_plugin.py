"""The built-in ``console`` run-event plugin: a live table of the latest iterations on stderr."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

import plugins.console.plugin as console_plugin
from spade_core.plugins import load_plugins
from spade_core.run_info import RunInfo

from fakes.console_rows import metrics as _metrics
from fakes.report_runs import make_report_run


def test_table_shows_the_latest_iterations():
    rows = [_metrics(i, 0.1 * i) for i in range(7)]
    out = Console(file=io.StringIO(), width=120)
    out.print(console_plugin.iteration_table(rows, total=10))
    text = out.file.getvalue()
    assert "iteration 6 of 10" in text
    lines = [line.split() for line in text.splitlines()]
    first_cells = [cells[0] for cells in lines if cells and cells[0].isdigit()]
    assert first_cells == ["2", "3", "4", "5", "6"]  # the last five iterations
    assert "0.600" in text and "50%/75%" in text and "13.8" in text
    assert "verdicts ok 3, timeout 1" in text and "slowest rollout 9.2s" in text


def _curriculum(iteration: int) -> dict:
    """A row of a run with replay and skills: the memory's counts by status and per-skill counts."""
    return {**_metrics(iteration, 0.5), "envs_replayed": iteration, "envs_retired": iteration % 2,
            "frontier_size": 10 + iteration, "envs_mastered_total": 100 * iteration,
            "skills": {"math": {"proposed": 4, "valid": 3, "played": 5},
                       "logic": {"proposed": 2, "valid": 1, "played": 1},
                       "replay-only": {"proposed": 0, "valid": 0, "played": 2}},
            "levels": {"10": {"proposed": 1, "valid": 1, "played": 1},
                       "2": {"proposed": 5, "valid": 3, "played": 5}}}


def _cells(text: str) -> dict[str, list[str]]:
    """The rendered table's columns by header (headers are single words, except "mast Σ" and
    "succ u/h", joined here), from the header line and the rows under it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["iter"])
    names = lines[start].replace("mast Σ", "mast_Σ").replace("succ u/h", "succ_u/h").split()
    rows = [line.split() for line in lines[start + 2:] if line.split()[:1] and
            line.split()[0].isdigit()]
    return {name: [row[i] for row in rows] for i, name in enumerate(names)}


def test_table_shows_the_memory_by_status_and_per_skill_validity():
    rows = [_curriculum(i) for i in range(7)]
    out = Console(file=io.StringIO(), width=200)
    out.print(console_plugin.iteration_table(rows, total=10))
    text = out.file.getvalue()
    columns = _cells(text)
    assert columns["iter"] == ["2", "3", "4", "5", "6"]
    assert columns["repl"] == ["2", "3", "4", "5", "6"]
    assert columns["front"] == ["12", "13", "14", "15", "16"]
    assert columns["mast_Σ"] == ["200", "300", "400", "500", "600"]
    assert columns["mast"] == ["1"] * 5 and columns["regret"] == ["0.500"] * 5
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    caption = " ".join(text.split())
    assert "retired or too hard 0 (3 so far)" in caption  # 1 at iterations 1, 3 and 5
    assert "skills: logic 1/2, math 3/4;" in caption and "replay-only" not in caption
    assert "levels: L2 3/5, L10 1/1;" in caption


def test_caption_names_a_few_skills_and_counts_the_rest():
    row = _curriculum(0)
    row["skills"] = {f"s{i}": {"proposed": 1, "valid": i % 2} for i in range(9)}
    out = Console(file=io.StringIO(), width=200)
    out.print(console_plugin.iteration_table([row]))
    caption = " ".join(out.file.getvalue().split())  # the caption wraps at the table's width
    assert "skills: s0 0/1, s1 1/1, s2 0/1, s3 1/1, s4 0/1, s5 1/1, +3 more;" in caption


def test_rows_from_before_the_curriculum_keep_the_narrow_table():
    out = Console(file=io.StringIO(), width=120)
    out.print(console_plugin.iteration_table([_metrics(i, 0.5) for i in range(3)]))
    text = out.file.getvalue()
    assert set(_cells(text)) == {"iter", "prop", "valid", "dup", "play", "mast", "hard",
                                         "regret", "d.rew", "succ_u/h", "secs"}
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
    assert "skills:" not in text and "retired" not in text


def test_table_tolerates_missing_and_odd_fields():
    out = Console(file=io.StringIO(), width=120)
    out.print(console_plugin.iteration_table([{"iteration": 0, "mean_regret": float("nan"),
                                               "seconds": "n/a", "verdicts": None,
                                               "skills": {"a": "x", "b": {"proposed": "2"}},
                                               "levels": [1], "frontier_size": None,
                                               "envs_retired": "many"}]))
    text = out.file.getvalue()
    assert "iteration 0" in text and "–" in text and "front" in text
    assert "skills" not in text and "retired or too hard – (0 so far)" in text


def test_hooks_print_during_a_real_loop(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist's workers have COLUMNS=80
    run_dir = make_report_run(tmp_path, 2, console_plugin)
    err = capsys.readouterr().err
    assert err.count("iteration 0 of 2") == 1 and err.count("iteration 1 of 2") == 1
    assert "regret" in err and "succ u/h" in err
    # stderr is no terminal here: the plugin's own console is 100 wide, so nothing is squeezed.
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    columns = _cells(err.split("iteration 1 of 2")[1])
    assert columns["iter"] == ["0", "1"]
    assert columns["front"] == [str(r["frontier_size"]) for r in rows]
    assert columns["mast_Σ"] == [str(r["envs_mastered_total"]) for r in rows]
    assert columns["repl"] == [str(r["envs_replayed"]) for r in rows]
    assert console_plugin._history == {}  # forgotten at run end


def test_uses_the_runners_console_and_can_be_turned_off(tmp_path, monkeypatch, capsys):
    shared = Console(file=io.StringIO(), width=120)
    run_info = RunInfo(run_dir=tmp_path, config={"run": {"iterations": 3}},
                       extra={"console": shared})
    console_plugin.spade_run_start(run_info=run_info)
    console_plugin.spade_iteration_end(run_info=run_info, iteration=0, metrics=_metrics(0, 0.5))
    assert "iteration 0 of 3" in shared.file.getvalue()
    monkeypatch.setenv(console_plugin.ENV_SWITCH, "0")
    console_plugin.spade_iteration_end(run_info=run_info, iteration=1, metrics=_metrics(1, 0.5))
    console_plugin.spade_run_end(run_info=run_info, status="completed", error=None)
    assert "iteration 1" not in shared.file.getvalue() and capsys.readouterr().err == ""


def test_installed_as_a_builtin_plugin():
    loaded = load_plugins()
    info = next((p for p in loaded.plugins if p.name == "console"), None)
    if info is None:
        pytest.fail("entry point `console` missing: reinstall (pip install --no-deps -e .)")
    assert info.error is None
    assert info.hooks == ["spade_iteration_end", "spade_phase_progress", "spade_run_end",
                          "spade_run_start"]


def test_nothing_played_is_n_a_with_a_warning():
    row = {**_metrics(0, 0.0), "envs_valid": 0, "envs_duplicate": 0, "envs_played": 0,
           "agent_success_unhinted": 0.0, "agent_success_hinted": 0.0}
    out = Console(file=io.StringIO(), width=200)
    out.print(console_plugin.iteration_table([_metrics(0, 0.5), {**row, "iteration": 1}]))
    text = out.file.getvalue()
    columns = _cells(text)
    assert columns["regret"] == ["0.500", "n/a"] and columns["succ_u/h"] == ["50%/75%", "n/a"]
    assert columns["d.rew"] == ["0.250", "0.250"]  # the designer's reward is still a figure
    assert "warning: nothing played in iteration 1 (valid 0 of 4): regret and success n/a" in (
        " ".join(text.split()))


def test_caption_says_how_the_hints_fared():
    row = {**_metrics(0, 0.5), "hints": 4, "hints_redacted": 1, "hints_hurt": 2,
           "hints_checked": 3, "hints_contradict": 1}
    out = Console(file=io.StringIO(), width=200)
    out.print(console_plugin.iteration_table([row]))
    caption = " ".join(out.file.getvalue().split())
    assert "hints 4: redacted 1, hurt 2, contradict 1/3 checked" in caption
    out = Console(file=io.StringIO(), width=200)
    out.print(console_plugin.iteration_table([_metrics(0, 0.5)]))  # a run from before hints
    assert "hints" not in out.file.getvalue()
