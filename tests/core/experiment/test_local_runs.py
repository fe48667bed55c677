"""spade_core/experiment/local_runs.py: an experiment's runs in local worker processes
(``workers: N``): every run executed once, each finished run reported with its lines, a failed
run raised after the others ended; one real pool of spawned processes; the file's key and the
command-line override checked."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from spade_core.errors import ConfigError
from spade_core.experiment.local_runs import run_in_processes
from spade_core.experiment.plan import PlannedRun
from spade_core.experiment.runner import run_experiment
from spade_core.experiment.spec import ExperimentSpec

from fakes.experiment import write_experiment


def _runs(tmp_path: Path) -> list[PlannedRun]:
    return [PlannedRun(arm=arm, seed=seed, dir=tmp_path / arm / str(seed), config={})
            for seed in (0, 1) for arm in ("ref", "good")]


def record_pid(run, iterations, plugins, report):
    """An ``execute`` a spawned process can import: says where it ran."""
    report(f"{run.label} in {os.getpid()} with {os.environ.get('OMP_NUM_THREADS')}")
    return "fresh"


def test_every_run_runs_once_and_a_failure_is_raised_after_the_others(tmp_path):
    ran, finished, lines = [], [], []

    def execute(run, iterations, plugins, report):
        ran.append((run.arm, run.seed, iterations))
        report(f"iteration of {run.label}")
        if run.arm == "good" and run.seed == 0:
            raise RuntimeError("out of memory")
        return "fresh"

    with pytest.raises(RuntimeError, match="out of memory"):
        run_in_processes(2, _runs(tmp_path), 3, execute, lines.append,
                         after_run=lambda run, state: finished.append((run.arm, run.seed)),
                         make_executor=lambda n: ThreadPoolExecutor(n))
    assert sorted(ran) == [("good", 0, 3), ("good", 1, 3), ("ref", 0, 3), ("ref", 1, 3)]
    assert sorted(finished) == [("good", 1), ("ref", 0), ("ref", 1)]
    assert "  [ref seed 1] iteration of ref seed 1" in lines
    assert any("good seed 0 failed: out of memory" in line for line in lines)


def test_runs_go_to_spawned_processes_with_one_thread_each(tmp_path):
    lines: list[str] = []
    run_in_processes(2, _runs(tmp_path)[:2], 1, record_pid, lines.append)
    ran = [line for line in lines if line.startswith("  [")]
    threads = os.environ.get("OMP_NUM_THREADS", "1")  # a value the user set is kept
    assert len(ran) == 2
    assert all(f" in {os.getpid()} " not in line and line.endswith(f" with {threads}")
               for line in ran)


def test_workers_and_ray_exclude_each_other(tmp_path):
    base = {"base": "b.yaml", "arms": {"a": []}, "reference_arm": "a", "seeds": 1,
            "budget": {"iterations": 1}, "heldout": {"suites": {"s": {}}, "every": 1}}
    assert ExperimentSpec(**base, workers=2).workers == 2
    with pytest.raises(ValueError, match="leave out one of ray and workers"):
        ExperimentSpec(**base, workers=2, ray={"address": "local"})
    with pytest.raises(ValueError):
        ExperimentSpec(**base, workers=0)


def test_the_command_line_cannot_send_a_ray_experiment_to_local_processes(tmp_path):
    path = write_experiment(tmp_path)
    path.write_text(path.read_text() + "ray: {address: local}\n")
    from fakes.experiment import experiment_plugins

    with pytest.raises(ConfigError, match="--workers 2: .* sends its runs to Ray"):
        run_experiment(path, tmp_path / "out", plugins=experiment_plugins(),
                       report=lambda line: None, workers=2)


def test_no_more_than_workers_runs_are_handed_out_and_they_start_in_plan_order(tmp_path):
    """Only ``workers`` runs are with the pool at a time: after Ctrl-C none is left queued."""
    import threading
    import time

    lock, started, at_once = threading.Lock(), [], [0, 0]

    def execute(run, iterations, plugins, report):
        with lock:
            started.append(run.label)
            at_once[0] += 1
            at_once[1] = max(at_once[1], at_once[0])
        time.sleep(0.02)
        with lock:
            at_once[0] -= 1
        return "fresh"

    runs = _runs(tmp_path)
    # a pool of 4 threads: only the runner's own limit keeps it to 2 runs at once
    run_in_processes(2, runs, 1, execute, lambda line: None,
                     make_executor=lambda n: ThreadPoolExecutor(4))
    assert set(started[:2]) == {runs[0].label, runs[1].label}
    assert sorted(started) == sorted(r.label for r in runs)
    assert at_once[1] == 2
