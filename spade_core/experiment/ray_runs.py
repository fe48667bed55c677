"""The experiment's runs as Ray tasks (``ray: {address: ...}``): one task per arm x seed, each
running the runner's ``execute`` (the same run, resume or skip as the serial
path) in the driver's working directory with the driver's ``sys.path``. Assumes every node sees
the same files at the same paths (a shared filesystem, or a one-machine cluster); Ray is imported
only here (``pip install 'spade-rl[ray]'``)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from spade_core.experiment.outcomes import run_ended
from spade_core.experiment.plan import PlannedRun
from spade_core.experiment.spec import RaySpec


def _task(execute: Callable[..., str], run: PlannedRun, iterations: int,
          cwd: str) -> tuple[str, list[str]]:
    """Run one planned run on a Ray worker with ``execute`` (the runner's); returns what it did
    and its last progress lines."""
    os.chdir(cwd)
    lines: list[str] = []
    return execute(run, iterations, None, lines.append), lines[-20:]


def run_on_ray(spec: RaySpec, runs: list[PlannedRun], iterations: int,
               execute: Callable[..., str], report: Callable[[str], None],
               after_run: Callable[[PlannedRun, str], None] | None = None) -> None:
    """Submit every run (each run by ``execute(run, iterations, None, report)``), wait for all;
    a failed run's error is raised once the others ended."""
    from spade_core.errors import ConfigError

    try:
        import ray
    except ImportError:
        raise ConfigError("experiment: ray.address is set but Ray is not installed (pip "
                          "install 'spade-rl[ray]'), or leave out the ray key to run the arms "
                          "one after another") from None
    path = os.pathsep.join(p for p in sys.path if p)
    ray.init(address=spec.address, ignore_reinit_error=True,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    remote = ray.remote(num_cpus=spec.num_cpus, num_gpus=spec.num_gpus)(_task)
    pending: dict[Any, PlannedRun] = {
        remote.remote(execute, run, iterations, os.getcwd()): run for run in runs}
    report(f"spade experiment: {len(pending)} runs submitted to Ray at {spec.address}")
    failure: BaseException | None = None
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        run = pending.pop(done[0])
        error = run_ended(run, functools.partial(ray.get, done[0]), report, after_run)
        failure = failure or error
    if failure is not None:
        raise failure
