"""The experiment's runs in ``workers`` local processes at once (``workers: N`` in the file, or
``spade experiment --workers N``): each process runs one run after another with the runner's
``execute`` (the same run, resume or skip as the serial path), so an experiment of many short
runs uses every core of one machine without Ray. The processes are started fresh (``spawn``), in
the driver's working directory with its ``sys.path``, and keep their imports, plugins and
sandboxes from one run to the next."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import Any

from spade_core.experiment.outcomes import run_ended
from spade_core.experiment.plan import PlannedRun

#: Thread pools of numerical libraries, one thread per run: the runs already fill the cores,
#: and idle OpenMP threads spin (about 15 % more CPU for a lab run with two of them).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: Asks the sandbox plugins to keep a sandbox for the process's next run rather than start it
#: again for each (``process``: its fork servers; docs/sandbox.md).
KEEP_SANDBOXES = "SPADE_KEEP_SANDBOXES"

_plugins: Any = None


def _start_worker() -> None:
    """In each worker process, before anything imports a numerical library."""
    for name in (*THREAD_VARIABLES, KEEP_SANDBOXES):
        os.environ.setdefault(name, "1")


def _task(execute: Callable[..., str], run: PlannedRun, iterations: int
          ) -> tuple[str, list[str]]:
    """Run one planned run in a worker process; returns what it did and its last progress
    lines. The plugins are loaded once per process."""
    global _plugins
    if _plugins is None:
        from spade_core.plugins import load_plugins

        _plugins = load_plugins()
    lines: list[str] = []
    return execute(run, iterations, _plugins, lines.append), lines[-20:]


def process_executor(workers: int) -> Executor:
    """``workers`` fresh processes (``spawn``: nothing of the driver's threads or sandboxes is
    inherited)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker)


def run_in_processes(workers: int, runs: list[PlannedRun], iterations: int,
                     execute: Callable[..., str], report: Callable[[str], None],
                     after_run: Callable[[PlannedRun, str], None] | None = None,
                     make_executor: Callable[[int], Executor] = process_executor) -> None:
    """Run every run with ``execute(run, iterations, plugins, report)``, ``workers`` at once,
    started in plan order (the runs of one seed before the next seed's); ``after_run`` is called
    on this process as each one ends. A failed run's error is raised once the others ended.
    Only ``workers`` runs are handed to the executor at a time, so Ctrl-C (which reaches the worker
    processes too: their runs stop as a run stops on Ctrl-C) leaves no queued run to start."""
    failure: BaseException | None = None
    waiting = list(reversed(runs))
    report(f"spade experiment: {len(runs)} runs, {workers} at once in local processes")
    with make_executor(workers) as executor:
        running: dict[Future[tuple[str, list[str]]], PlannedRun] = {}
        while waiting or running:
            while waiting and len(running) < workers:
                run = waiting.pop()
                running[executor.submit(_task, execute, run, iterations)] = run
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in done:
                error = run_ended(running.pop(future), future.result, report, after_run)
                failure = failure or error
    if failure is not None:
        raise failure
