"""The console plugin's progress per phase: bars on a terminal, one line per finished phase in a
log file, and the switch that forces bars or nothing."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

from rich.console import Console

import plugins.console.plugin as console_plugin
from plugins.console.progress import PhaseBars, PhaseLines
from spade_core.run_info import RunInfo

from fakes.cli import ROOT
from fakes.console_rows import metrics as _metrics


def test_progress_bars_per_phase_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("SPADE_PROGRESS", raising=False)
    shared = Console(file=io.StringIO(), width=100, force_terminal=True)
    run_info = RunInfo(run_dir=tmp_path, config={"run": {"iterations": 2}},
                       extra={"console": shared})
    console_plugin.spade_run_start(run_info=run_info)
    bars = console_plugin._bars[str(tmp_path)]
    console_plugin.spade_phase_progress(run_info=run_info, iteration=0, phase="design", completed=0,
                                        total=8)
    console_plugin.spade_phase_progress(run_info=run_info, iteration=0, phase="rollout",
                                        completed=5, total=48)
    tasks = {t.description: t for t in bars.progress.tasks}
    assert (tasks["design"].completed, tasks["design"].total) == (0, 8)
    assert (tasks["rollout"].completed, tasks["rollout"].total) == (5, 48)
    console_plugin.spade_phase_progress(run_info=run_info, iteration=0, phase="rollout",
                                        completed=48, total=48)
    assert tasks["rollout"].finished
    shared.file.truncate(0)
    console_plugin.spade_iteration_end(run_info=run_info, iteration=0, metrics=_metrics(0, 0.5))
    assert bars.progress is None  # the bars make way for the table
    assert "iteration 0 of 2" in shared.file.getvalue()
    console_plugin.spade_phase_progress(run_info=run_info, iteration=1, phase="design", completed=1,
                                        total=8)
    assert [t.description for t in bars.progress.tasks] == ["design"]  # a new iteration's bars
    console_plugin.spade_run_end(run_info=run_info, status="completed", error=None)
    assert console_plugin._bars == {}


def test_a_log_file_gets_lines_and_the_switch_forces_bars_or_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("SPADE_PROGRESS", raising=False)
    log = io.StringIO()
    run_info = RunInfo(run_dir=tmp_path, config={}, extra={"console": Console(file=log)})
    console_plugin.spade_run_start(run_info=run_info)
    assert isinstance(console_plugin._bars[str(tmp_path)], PhaseLines)
    console_plugin.spade_run_end(run_info=run_info, status="completed", error=None)
    monkeypatch.setenv("SPADE_PROGRESS", "1")  # bars even without a terminal, and drawn
    console_plugin.spade_run_start(run_info=run_info)
    bars = console_plugin._bars[str(tmp_path)]
    assert isinstance(bars, PhaseBars) and bars.console.is_terminal
    console_plugin.spade_phase_progress(run_info=run_info, iteration=0, phase="design", completed=2,
                                        total=8)
    console_plugin.spade_run_end(run_info=run_info, status="completed", error=None)
    assert "design" in log.getvalue() and "2/8" in log.getvalue()
    monkeypatch.setenv("SPADE_PROGRESS", "0")
    console_plugin.spade_run_start(run_info=run_info)
    assert str(tmp_path) not in console_plugin._bars
    console_plugin.spade_run_end(run_info=run_info, status="completed", error=None)


def test_phase_lines_name_counts_and_seconds(tmp_path, monkeypatch):
    monkeypatch.delenv("SPADE_PROGRESS", raising=False)
    log = io.StringIO()
    run_info = RunInfo(run_dir=tmp_path, config={},
                       extra={"console": Console(file=log, width=80)})
    console_plugin.spade_run_start(run_info=run_info)
    for completed in range(5):
        console_plugin.spade_phase_progress(run_info=run_info, iteration=0, phase="design",
                                            completed=completed, total=4)
    console_plugin.spade_phase_progress(run_info=run_info, iteration=0, phase="rollout",
                                        completed=3, total=12)
    lines = log.getvalue().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"iteration 0 design: 4/4 prompts \(\d+\.\d s\)",
                                            lines[0])
    console_plugin.spade_iteration_end(run_info=run_info, iteration=0, metrics=_metrics(0, 0.5))
    assert "iteration 0 rollout: 3/12 episodes (" in log.getvalue()  # unfinished: at the end
    console_plugin.spade_run_end(run_info=run_info, status="completed", error=None)


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
