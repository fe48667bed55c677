"""The built-in ``console`` run-event plugin: a live table of the latest iterations on stderr."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from rich.console import Console

import plugins.console.plugin as console_plugin
from plugins.console.progress import PhaseBars, PhaseLines
from spade_core.plugins import load_plugins
from spade_core.run_info import RunInfo

from fakes.cli import ROOT
from fakes.report_runs import make_report_run


def _metrics(iteration: int, regret: float) -> dict:
    return {"iteration": iteration, "envs_proposed": 4, "envs_valid": 3, "envs_duplicate": 1,
            "envs_played": 2, "envs_mastered": 1, "envs_too_hard": 0, "mean_regret": regret,
            "mean_designer_reward": 0.25, "agent_success_unhinted": 0.5,
            "agent_success_hinted": 0.75, "verdicts": {"ok": 3, "timeout": 1},
            "seconds": {"design": 3.5, "rollout": 9.25, "hint": 1.0}, "train": {"loss": 0.1}}


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
    """A row of a run with replay and skills: the memory's pools and per-skill counts."""
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


def test_table_shows_the_memory_pools_and_per_skill_validity():
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


def test_hooks_print_during_a_real_loop(tmp_path, capsys):
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
    run = RunInfo(run_dir=tmp_path, config={"run": {"iterations": 3}},
                  extra={"console": shared})
    console_plugin.spade_run_start(run=run)
    console_plugin.spade_iteration_end(run=run, iteration=0, metrics=_metrics(0, 0.5))
    assert "iteration 0 of 3" in shared.file.getvalue()
    monkeypatch.setenv(console_plugin.ENV_SWITCH, "0")
    console_plugin.spade_iteration_end(run=run, iteration=1, metrics=_metrics(1, 0.5))
    console_plugin.spade_run_end(run=run, status="completed", error=None)
    assert "iteration 1" not in shared.file.getvalue() and capsys.readouterr().err == ""


def test_installed_as_a_builtin_plugin():
    loaded = load_plugins()
    info = next((p for p in loaded.plugins if p.name == "console"), None)
    if info is None:
        pytest.fail("entry point `console` missing: reinstall (pip install --no-deps -e .)")
    assert info.error is None
    assert info.hooks == ["spade_iteration_end", "spade_phase_progress", "spade_run_end",
                          "spade_run_start"]


def test_progress_bars_per_phase_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("SPADE_PROGRESS", raising=False)
    shared = Console(file=io.StringIO(), width=100, force_terminal=True)
    run = RunInfo(run_dir=tmp_path, config={"run": {"iterations": 2}},
                  extra={"console": shared})
    console_plugin.spade_run_start(run=run)
    bars = console_plugin._bars[str(tmp_path)]
    console_plugin.spade_phase_progress(run=run, iteration=0, phase="design", completed=0,
                                        total=8)
    console_plugin.spade_phase_progress(run=run, iteration=0, phase="rollout", completed=5,
                                        total=48)
    tasks = {t.description: t for t in bars.progress.tasks}
    assert (tasks["design"].completed, tasks["design"].total) == (0, 8)
    assert (tasks["rollout"].completed, tasks["rollout"].total) == (5, 48)
    console_plugin.spade_phase_progress(run=run, iteration=0, phase="rollout", completed=48,
                                        total=48)
    assert tasks["rollout"].finished
    shared.file.truncate(0)
    console_plugin.spade_iteration_end(run=run, iteration=0, metrics=_metrics(0, 0.5))
    assert bars.progress is None  # the bars make way for the table
    assert "iteration 0 of 2" in shared.file.getvalue()
    console_plugin.spade_phase_progress(run=run, iteration=1, phase="design", completed=1,
                                        total=8)
    assert [t.description for t in bars.progress.tasks] == ["design"]  # a new iteration's bars
    console_plugin.spade_run_end(run=run, status="completed", error=None)
    assert console_plugin._bars == {}


def test_a_log_file_gets_lines_and_the_switch_forces_bars_or_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("SPADE_PROGRESS", raising=False)
    log = io.StringIO()
    run = RunInfo(run_dir=tmp_path, config={}, extra={"console": Console(file=log)})
    console_plugin.spade_run_start(run=run)
    assert isinstance(console_plugin._bars[str(tmp_path)], PhaseLines)
    console_plugin.spade_run_end(run=run, status="completed", error=None)
    monkeypatch.setenv("SPADE_PROGRESS", "1")  # bars even without a terminal, and drawn
    console_plugin.spade_run_start(run=run)
    bars = console_plugin._bars[str(tmp_path)]
    assert isinstance(bars, PhaseBars) and bars.console.is_terminal
    console_plugin.spade_phase_progress(run=run, iteration=0, phase="design", completed=2,
                                        total=8)
    console_plugin.spade_run_end(run=run, status="completed", error=None)
    assert "design" in log.getvalue() and "2/8" in log.getvalue()
    monkeypatch.setenv("SPADE_PROGRESS", "0")
    console_plugin.spade_run_start(run=run)
    assert str(tmp_path) not in console_plugin._bars
    console_plugin.spade_run_end(run=run, status="completed", error=None)


def test_phase_lines_name_counts_and_seconds(tmp_path, monkeypatch):
    monkeypatch.delenv("SPADE_PROGRESS", raising=False)
    log = io.StringIO()
    run = RunInfo(run_dir=tmp_path, config={}, extra={"console": Console(file=log, width=80)})
    console_plugin.spade_run_start(run=run)
    for completed in range(5):
        console_plugin.spade_phase_progress(run=run, iteration=0, phase="design",
                                            completed=completed, total=4)
    console_plugin.spade_phase_progress(run=run, iteration=0, phase="rollout", completed=3,
                                        total=12)
    lines = log.getvalue().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"iteration 0 design: 4/4 prompts \(\d+\.\d s\)",
                                            lines[0])
    console_plugin.spade_iteration_end(run=run, iteration=0, metrics=_metrics(0, 0.5))
    assert "iteration 0 rollout: 3/12 episodes (" in log.getvalue()  # unfinished: at the end
    console_plugin.spade_run_end(run=run, status="completed", error=None)


PHASE_LINE = re.compile(r"^iteration (\d+) (\w+): (\d+)(?:/(\d+))? (\w+) \((\d+\.\d) s\)$", re.M)


def test_a_real_run_with_stderr_to_a_file_logs_each_phase(tmp_path):
    """The real loop (fake components) in a subprocess whose stderr is a file, as a batch job."""
    script = ("import sys; from pathlib import Path; import plugins.console.plugin as c; "
              "from fakes.report_runs import make_report_run; "
              "make_report_run(Path(sys.argv[1]), 2, c)")
    env = {k: v for k, v in os.environ.items() if k not in ("SPADE_PROGRESS", "COLUMNS")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"),
                                         env.get("PYTHONPATH", "")])
    log = tmp_path / "run.log"
    with log.open("w") as err:
        subprocess.run([sys.executable, "-c", script, str(tmp_path)], stderr=err, check=True,
                       env=env, timeout=300)
    text = log.read_text()
    found = {(int(m[1]), m[2]) for m in PHASE_LINE.finditer(text)}
    for iteration in (0, 1):
        assert {(iteration, p) for p in ("design", "validate", "rollout", "estimate",
                                         "train")} <= found, text
    assert text.index("iteration 0 design:") < text.index("iteration 0 of 2")  # before the table
    assert "\x1b[" not in text  # plain text, no terminal codes


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
