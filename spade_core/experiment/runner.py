"""Run an experiment: every arm x seed as an ordinary run directory through
:func:`spade_core.api.run` (the code of ``spade run``), one after another, ``workers`` at once in
local processes or as Ray tasks, and the untrained model's held-out scores once per seed.
Resumable: a completed run is skipped, a run with a checkpoint is resumed from it, a run killed
before its first checkpoint starts again."""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spade_core.experiment.plan import (
    RESULTS_FILE,
    SPEC_FILE,
    PlannedRun,
    baseline_config,
    baseline_file,
    plan,
)
from spade_core.experiment.spec import ExperimentSpec, load_spec

if TYPE_CHECKING:
    from spade_core.plugins import LoadedPlugins

Reporter = Callable[[str], None]
#: Default experiment folder: ``runs/experiments/<name>`` (no timestamp, so running the same
#: file again resumes it).
DEFAULT_OUT = "runs/experiments/{name}"
#: Seconds between two rewrites of ``results.json`` while runs finish: it reads every run's
#: files (about 15 ms a lab run), so rewriting it after each of 200 runs cost minutes.
RESULTS_EVERY = 30.0


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_state(run: PlannedRun, iterations: int) -> str:
    """``done`` (completed with every iteration), ``resume`` (it has a checkpoint) or ``fresh``
    (nothing usable yet)."""
    from spade_core.checkpoint_files import latest_checkpoint

    summary = run.dir / "summary.json"
    if summary.is_file():
        try:
            data = json.loads(summary.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            data = {}
        if data.get("status") == "completed" and data.get("iterations_completed", 0) >= iterations:
            return "done"
    if run.dir.is_dir() and latest_checkpoint(run.dir) is not None:
        return "resume"
    return "fresh"


def execute(run: PlannedRun, iterations: int, plugins: "LoadedPlugins | None",
            report: Reporter, state: str | None = None) -> str:
    """Run, resume or skip one planned run; returns what it did (its :func:`run_state`, read
    here unless the caller has just read it)."""
    from spade_core.api import run as run_api

    state = state or run_state(run, iterations)
    if state == "done":
        return state
    if state == "fresh" and run.dir.exists():
        shutil.rmtree(run.dir)  # killed before its first checkpoint: nothing to resume
    run.dir.parent.mkdir(parents=True, exist_ok=True)
    run_api(run.config, resume=run.dir if state == "resume" else None, plugins=plugins,
            report=lambda line: report(f"  [{run.label}] {line}"))
    return state


def evaluate_baseline(spec: ExperimentSpec, base: dict[str, Any], seed: int, out: Path,
                      plugins: "LoadedPlugins | None") -> None:
    """The untrained model's held-out scores at ``seed`` (compute 0), unless already there."""
    from spade_core.api import evaluate
    from spade_core.atomic_files import write_atomic

    path = baseline_file(out, seed)
    if path.is_file():
        return
    held = spec.heldout
    payload = evaluate(baseline_config(spec, base, seed, out), samples=held.samples,
                       limit=held.limit, max_new_tokens=held.max_new_tokens, plugins=plugins)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(payload, indent=1) + "\n")


def check_configs(runs: list[PlannedRun], plugins: "LoadedPlugins") -> None:
    """Resolve every run's config, and check each arm's against this machine (the preflight
    ``spade run`` makes), before anything runs: a bad override or settings that cannot work
    together fail at once, named with their arm, not when that arm's first run starts."""
    from spade_core.api import check, load_config
    from spade_core.errors import ConfigError

    checked: set[str] = set()
    for run in runs:
        try:
            resolved = load_config(run.config, plugins=plugins)
            if run.arm not in checked:  # the seeds of an arm differ only in seed and folder
                check(resolved, plugins, raise_problems=True)
                checked.add(run.arm)
        except ConfigError as exc:
            raise ConfigError(f"arm {run.arm!r} (seed {run.seed}): {exc}") from None


def prepare(path: str | Path, out: str | Path | None, plugins: "LoadedPlugins | None"
            ) -> tuple[ExperimentSpec, Path, dict[str, Any], Path, list[PlannedRun],
                       "LoadedPlugins"]:
    """The experiment in ``path`` read and checked, nothing run: its spec, the base config's
    file and contents, its folder (``out`` or the default), its planned runs (every arm's config
    checked) and the plugins."""
    from spade_core.config.load import read_config_file
    from spade_core.plugins import load_plugins

    spec, base_file = load_spec(path)
    loaded = plugins or load_plugins()
    base = read_config_file(base_file) or {}
    folder = Path(out) if out is not None else Path(DEFAULT_OUT.format(name=spec.name))
    runs = plan(spec, base, folder)
    check_configs(runs, loaded)
    return spec, base_file, base, folder, runs, loaded


def run_experiment(path: str | Path, out: str | Path | None = None, *,
                   plugins: "LoadedPlugins | None" = None, report: Reporter = _stderr,
                   after_run: Callable[[PlannedRun, str], None] | None = None,
                   workers: int | None = None) -> Path:
    """Run (or continue) the experiment in ``path``; returns its folder, which then holds
    ``results.json``. ``after_run(run, state)`` is called after each run (``state``: what
    :func:`execute` did). ``workers``: runs at once in local processes (default: the file's
    ``workers``). The results file is rewritten as runs finish (at most every
    :data:`RESULTS_EVERY` seconds), when the experiment stops, and at the end, so a stopped
    experiment keeps what it measured."""
    from spade_core.atomic_files import write_atomic
    from spade_core.experiment.results import build_results

    spec, base_file, base, folder, runs, loaded = prepare(path, out, plugins)
    if workers is not None:
        spec = spec.model_copy(update={"workers": workers})
        if spec.ray is not None and workers > 1:
            from spade_core.errors import ConfigError

            raise ConfigError(f"--workers {workers}: {path} sends its runs to Ray (ray: ...); "
                              "leave out --workers or the file's ray key")
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / SPEC_FILE, json.dumps(
        {"experiment": str(path), "base": str(base_file), "spec": spec.model_dump(),
         "runs": [{"arm": r.arm, "seed": r.seed, "dir": str(r.dir), "overrides": r.overrides}
                  for r in runs]}, indent=1) + "\n")
    started = time.perf_counter()
    written = [started]
    done_records: dict[str, dict[str, Any]] = {}  # the records of runs done: read once

    def write_results() -> None:
        results = build_results(spec, runs, folder, base_file, done_records)
        results["seconds_this_session"] = round(time.perf_counter() - started, 1)
        write_atomic(folder / RESULTS_FILE, json.dumps(results, indent=1) + "\n")
        written[0] = time.perf_counter()

    def finished(run: PlannedRun, state: str) -> None:
        if time.perf_counter() - written[0] >= RESULTS_EVERY:
            write_results()
        if after_run is not None:
            after_run(run, state)

    iterations = spec.budget.iterations
    report(f"spade experiment: {spec.name}: {len(spec.arms)} arms x {len(spec.seed_list)} seeds "
           f"= {len(runs)} runs of {iterations} iterations in {folder}")
    try:
        if spec.ray is not None or spec.workers > 1:
            if spec.heldout.baseline:
                for seed in spec.seed_list:
                    evaluate_baseline(spec, base, seed, folder, loaded)
            if spec.ray is not None:
                from spade_core.experiment.ray_runs import run_on_ray

                run_on_ray(spec.ray, runs, iterations, execute, report, finished)
            else:
                from spade_core.experiment.local_runs import run_in_processes

                run_in_processes(spec.workers, runs, iterations, execute, report, finished)
        else:
            _run_serially(spec, base, folder, runs, loaded, report, finished)
    finally:
        try:
            write_results()
        except Exception as exc:  # noqa: BLE001 - never raised over the run's own error
            report(f"spade experiment: warning: {RESULTS_FILE} not written: {exc}")
    report(f"spade experiment: results in {folder / RESULTS_FILE}; the page: spade report "
           f"{folder}")
    return folder


def _run_serially(spec: ExperimentSpec, base: dict[str, Any], folder: Path,
                  runs: list[PlannedRun], loaded: "LoadedPlugins", report: Reporter,
                  finished: Callable[[PlannedRun, str], None]) -> None:
    """Every run in plan order in this process, each seed's baseline before its first run."""
    iterations = spec.budget.iterations
    for number, run in enumerate(runs, 1):
        if spec.heldout.baseline and run.arm == spec.reference_arm:
            if not baseline_file(folder, run.seed).is_file():
                report(f"spade experiment: seed {run.seed}: held-out scores of the "
                       "untrained model")
            evaluate_baseline(spec, base, run.seed, folder, loaded)
        state = run_state(run, iterations)
        verb = {"done": "already complete", "resume": "resuming",
                "fresh": "starting"}[state]
        report(f"spade experiment: [{number}/{len(runs)}] {run.label}: {verb}")
        execute(run, iterations, loaded, report, state)
        finished(run, state)
