"""A whole run: set up (:mod:`~spade_core.selfplay.setup`), resume or start, run the iterations
(:func:`~spade_core.selfplay.iteration.run_iteration`, or the asynchronous loop), checkpoint, and
write the summary; every part is closed whatever happens. A failure ends the run with ``status:
failed`` in ``summary.json`` and every finished iteration's data on disk (a full disk, wherever it
is met, as a :class:`~spade_core.disk_space.DiskFullError`); a new run that fails before it has
started leaves no run directory behind.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade_core.checkpoint_files import (
    CheckpointError,
    latest_checkpoint,
    read_state,
    resumable_checkpoint,
)
from spade_core.config.load import ResolvedConfig
from spade_core.disk_space import as_disk_full
from spade_core.distributed import LaunchInfo, launch_info
from spade_core.errors import ConfigError, PluginError, SpadeError
from spade_core.messages import plural
from spade_core.plugins import LoadedPlugins
from spade_core.run_info import RunInfo
from spade_core.selfplay.artifacts import RunArtifacts
from spade_core.selfplay.async_loop import AsyncLoop
from spade_core.selfplay.checkpoint import (
    load_rng,
    restore_memory,
    save_checkpoint,
    set_aside,
    truncate_jsonl,
)
from spade_core.selfplay.iteration import run_iteration
from spade_core.selfplay.metrics import TOTALS, iteration_line
from spade_core.selfplay.pipeline import Generated
from spade_core.selfplay.setup import (
    Reporter,
    SelfPlayRun,
    close_all,
    component_builder,
    open_run,
    require_followers,
    stderr_reporter,
)
from spade_core.selfplay.stop import RunStopped, StopRequest


def follow(resolved: ResolvedConfig, launch: LaunchInfo,
           report: Reporter = stderr_reporter) -> None:
    """A follower rank's whole run: build the generation backend and the trainer only, then carry
    out the main process's training calls until it closes the trainer (see
    ``spade_core.distributed``). Writes nothing to the run directory."""
    opened: list[Any] = []
    try:
        build, _ = component_builder(resolved, None, resolved.config.run.seed, opened, {}, launch)
        build("backend")
        trainer = build("trainer")
        require_followers(resolved, trainer, launch)
        trainer.follow()
    finally:
        close_all(opened, report)


def _prepare_run_dir(resolved: ResolvedConfig, resume: Path | None) -> Path:
    if resume is None:
        run_dir = resolved.run_dir()
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ConfigError(
                f"{resolved.source}: run.dir {str(run_dir)!r} already holds a run; choose another "
                "directory (e.g. --set run.dir=runs/{name}-{timestamp}), remove it, or continue "
                f"it with `spade run {resolved.source} --resume {run_dir}`."
            )
        return run_dir
    run_dir = Path(resume)
    if not (run_dir / "config.resolved.yaml").is_file():
        raise ConfigError(f"--resume {str(run_dir)!r}: not a run directory (no "
                          "config.resolved.yaml); give the directory a `spade run` wrote")
    return run_dir


def run(resolved: ResolvedConfig, loaded: LoadedPlugins, report: Reporter = stderr_reporter,
        resume: Path | None = None, backend: Any = None, trainer: Any = None) -> Path:
    """Run the configured number of iterations; returns the run directory. With ``resume`` (a run
    directory), continue that run from its latest checkpoint instead of starting a new one.
    ``backend`` and ``trainer`` replace the configured ones (benchmarks)."""
    config = resolved.config
    launch = launch_info()
    if not launch.main:  # a follower of a multi-process launch: train only, write nothing
        follow(resolved, launch, report)
        return resolved.run_dir() if resume is None else Path(resume)
    run_dir = _prepare_run_dir(resolved, resume)
    artifacts = RunArtifacts(run_dir, sync=config.run.fsync)
    checkpoint = _resume_point(run_dir, report) if resume is not None else None
    state: dict[str, Any] = read_state(checkpoint) if checkpoint is not None else {}
    # A fresh run whose start-up fails leaves nothing: what it created is removed again.
    start_up = _StartUp(run_dir) if resume is None else None
    run_info = RunInfo(run_dir=run_dir, config=resolved.to_dict(), seed=config.run.seed)
    progress = _Progress(start=int(state.get("next_iteration", 0)),
                         totals=dict(state.get("totals", {})))
    run_info.iteration = progress.start
    if checkpoint is not None:
        run_info.extra["resumed_from"] = progress.start
        run_info.extra["checkpoint"] = str(checkpoint)
    hook = loaded.manager.hook
    opened: list[Any] = []
    status, error, started = "failed", None, time.time()
    resumable = True
    stop = StopRequest()
    try:
        stop.install(report)
        artifacts.create(resolved.to_dict())
        report(f"spade: run directory {run_dir}" + (
            f" (resuming at iteration {progress.start} from {checkpoint.name})"
            if checkpoint else ""))
        if launch.distributed:
            report(f"spade: main process of {launch.world_size}; the others train their shard")
        run = open_run(resolved, loaded, artifacts, run_info, opened, backend=backend,
                         trainer=trainer, launch=launch)
        _begin(run, checkpoint, state, progress, report)
        hook.spade_run_start(run_info=run_info)
        if start_up is not None:
            start_up.passed = True
        if config.loop.async_level:
            _iterate_async(run, state, progress, report, stop)
        else:
            _iterate(run, progress, report, stop,
                     saved=checkpoint is not None or bool(config.checkpoint.every))
        status = "completed"
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
        raise
    except RunStopped as exc:
        status, error = "interrupted", str(exc)
        raise
    except Exception as exc:
        full = as_disk_full(exc, run_dir, "a file of the run (a plugin's or a library's write)")
        if full is not None:  # said plainly, with what to do once space is freed
            full = full.in_run(run_dir if latest_checkpoint(run_dir) else None)
            error = str(full)
            raise full from exc
        error = str(exc) if isinstance(exc, SpadeError) else f"{type(exc).__name__}: {exc}"
        # a config or plugin error happens again on resume: fix it first
        resumable = not isinstance(exc, (ConfigError, PluginError))
        raise
    finally:
        stop.uninstall()
        close_all(opened, report)
        summary = {"status": status, "error": error,
                   "iterations_completed": progress.completed,
                   "seconds": round(time.time() - started, 1), **progress.totals}
        if checkpoint is not None:
            summary["resumed_from"] = progress.start
        refused = start_up is not None and not start_up.passed and status != "completed"
        if not refused:
            _write_summary(artifacts, summary, report)
        hook.spade_run_end(run_info=run_info, status=status, error=error)
        if refused:
            report(f"spade: run {'stopped' if status == 'interrupted' else 'refused'} at "
                   f"start-up; {start_up.undo()}; start it again"
                   + (" once what the error says is fixed" if status == "failed" else ""))
        else:
            resumable = resumable and latest_checkpoint(run_dir) is not None
            report(end_message(summary, run_dir, config.run.iterations, resumable))
    return run_dir


class _StartUp:
    """What a fresh run's start-up creates: the run directory and the folders above it that did
    not exist yet. Until the start-up has ``passed`` (the components are built, the first
    checkpoint is written, the plugins are told the run starts), a failure :meth:`undo`-es it:
    a refused run leaves no half-made directory that ``--resume`` could not continue."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.passed = False
        #: The run directory and the folders above it that do not exist yet, deepest first.
        self.created: list[Path] = []
        for folder in (run_dir, *run_dir.parents):
            if folder.exists():
                break
            self.created.append(folder)

    def undo(self) -> str:
        """Remove what the start-up wrote into the run directory (which was empty or missing),
        then the folders it created, when they are empty; never a folder that existed before.
        Returns what became of the directory, for the user; never raises (it must not hide the
        error that refused the run)."""
        try:
            for child in self.run_dir.iterdir() if self.run_dir.is_dir() else ():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink(missing_ok=True)
            for folder in self.created:
                try:
                    folder.rmdir()
                except OSError:  # not empty (another process wrote there since)
                    break
        except OSError as exc:
            return f"removing what it wrote failed ({exc}): remove {self.run_dir} yourself"
        if self.run_dir.exists():
            return f"nothing of it is kept ({self.run_dir} is emptied)"
        return f"nothing of it is kept ({self.run_dir} is removed)"


def _write_summary(artifacts: RunArtifacts, summary: dict[str, Any], report: Reporter) -> None:
    """``summary.json``; a failure to write it is reported, never raised: it must not hide the
    error that ended the run (on a full disk the summary often cannot be written either)."""
    try:
        artifacts.write_summary(summary)
    except (OSError, SpadeError) as exc:
        report(f"spade: warning: summary.json not written: {exc}")


@dataclass
class _Progress:
    """Where a run is: the iteration it started at, the iterations completed, the running
    totals of ``summary.json``."""

    start: int
    totals: dict[str, float]
    completed: int = field(init=False)

    def __post_init__(self) -> None:
        self.completed = self.start


def _begin(run: SelfPlayRun, checkpoint: Path | None, state: dict[str, Any],
           progress: _Progress, report: Reporter) -> None:
    """A resumed run restored from its checkpoint; a fresh one with its fixed pool in the memory
    and its iteration-0 checkpoint. The sandbox's isolation is recorded either way."""
    config = run.resolved.config
    if checkpoint is not None:
        note = _restore(run, checkpoint, state, progress.start)
        if note:
            report(f"spade: warning: {note}")
    else:
        if run.pool is not None:
            added = run.pool.seed_memory(run.components.memory)
            report(f"spade: fixed pool of {plural(len(run.pool.envs), 'environment')} "
                   f"({added} new to the memory)")
        if config.checkpoint.every:
            _checkpoint(run, 0, progress.totals, config.checkpoint.keep)
    isolation = run.components.sandbox.isolation()
    run.artifacts.append_jsonl("isolation.jsonl", {"time": time.time(), **isolation})


def _iterate(run: SelfPlayRun, progress: _Progress, report: Reporter, stop: StopRequest,
             saved: bool) -> None:
    """The iterations one after another, a checkpoint every ``checkpoint.every``; on SIGTERM a
    checkpoint of what is done (unless just taken), then :class:`RunStopped`."""
    config = run.resolved.config
    every, keep = config.checkpoint.every, config.checkpoint.keep
    last: dict[str, Any] | None = None
    saved_at = progress.start if saved else None
    for iteration in range(progress.start, config.run.iterations):
        if stop.requested:  # SIGTERM: a checkpoint of what is done, then a clean stop
            if saved_at != progress.completed:
                _checkpoint(run, progress.completed, progress.totals, max(keep, 1))
            raise stop.stopped(progress.completed, run.artifacts.run_dir)
        run.run_info.iteration = iteration
        metrics = run_iteration(run, iteration, last)
        last = metrics["pipeline"]
        for key in TOTALS:
            progress.totals[key] = progress.totals.get(key, 0) + metrics[key]
        progress.completed = iteration + 1
        report(iteration_line(metrics))
        if every and (progress.completed % every == 0
                      or progress.completed == config.run.iterations):
            _checkpoint(run, progress.completed, progress.totals, keep)
            saved_at = progress.completed


def _iterate_async(run: SelfPlayRun, state: dict[str, Any], progress: _Progress,
                   report: Reporter, stop: StopRequest) -> None:
    """The iterations with training in the background (:class:`AsyncLoop`), resuming the
    iteration a checkpoint kept generated and untrained."""
    pending = Generated.from_dict(state["pending"]) if state.get("pending") else None
    if pending is not None:  # trained after the checkpoint: its row comes again
        truncate_jsonl(run.artifacts.run_dir / "metrics.jsonl", pending.iteration)

    def save(next_iteration: int, keep: int, **kept: Any) -> None:
        _checkpoint(run, next_iteration, progress.totals, keep, **kept)

    flow = AsyncLoop(run, progress.totals, report,
                     int(state.get("policy_version", progress.start)), save, stop)
    try:
        flow.iterate(progress.start, pending)
    finally:
        progress.completed = flow.completed
    if stop.requested:
        raise stop.stopped(progress.completed, run.artifacts.run_dir)


def _resume_point(run_dir: Path, report: Reporter) -> Path:
    """The checkpoint a resume starts from: the newest intact one. Damaged newer ones (a file cut
    short, an unreadable ``state.json``) are renamed ``damaged-iter-NNNNNN`` (kept, never read
    again) and reported."""
    checkpoint, skipped = resumable_checkpoint(run_dir)
    for damaged, problem in skipped:
        moved = set_aside(damaged)
        report(f"spade: warning: checkpoint {damaged.name} is damaged ({problem}); kept as "
               f"{moved} and not used"
               + (f"; resuming from the previous one, {checkpoint.name}" if checkpoint else ""))
    if checkpoint is None:
        if skipped:
            raise CheckpointError(f"--resume {str(run_dir)!r}: no intact checkpoint is left (the "
                                  "damaged ones are kept as checkpoints/damaged-*); the run "
                                  "cannot be continued")
        raise ConfigError(f"--resume {str(run_dir)!r}: the run has no checkpoint to continue "
                          "from: it never started (refused at start-up by an earlier spade-rl), "
                          "or ran with checkpoint.every 0, which writes none before a stop; "
                          "start it again in a new run directory")
    return checkpoint


def end_message(summary: dict[str, Any], run_dir: Path, planned: int,
                resumable: bool = True) -> str:
    """The run's last words, for a person: what happened, where it is, what to do next (the
    figures themselves are in ``summary.json``). The error itself is not repeated: it is raised
    to the caller (the command line prints it once). ``resumable``: whether ``--resume`` can
    help (not after a config or plugin error, which would happen again, nor without a
    checkpoint)."""
    seconds = float(summary.get("seconds", 0))
    took = f"{int(seconds // 60)} min {seconds % 60:.0f} s" if seconds >= 60 else f"{seconds:.1f} s"
    done = int(summary.get("iterations_completed", 0))
    counts = ", ".join(f"{int(summary.get(key, 0))} {label}" for key, label in (
        ("envs_valid", "valid"), ("envs_played", "played"), ("envs_mastered", "mastered")))
    proposed = plural(int(summary.get("envs_proposed", 0)), "environment")
    status = summary.get("status", "failed")
    lines = [f"spade: run {status} after {done} of {plural(planned, 'iteration')} in {took}: "
             f"{proposed} proposed, {counts}."]
    if done and not summary.get("envs_played"):
        lines.append(f"spade: warning: no environment was played in {plural(done, 'iteration')} "
                     f"(valid {int(summary.get('envs_valid', 0))} of "
                     f"{int(summary.get('envs_proposed', 0))} proposed): regret and success are "
                     "n/a; see the verdicts in metrics.jsonl or "
                     "`spade report` (docs/report.md, \"When nothing is played\")")
    lines.append(f"spade: results in {run_dir} (metrics.jsonl, summary.json, envs/)")
    if status != "completed" and resumable:
        lines.append(f"spade: continue it with: spade run --resume {run_dir}")
    return "\n".join(lines)


def _checkpoint(run: SelfPlayRun, next_iteration: int, totals: dict[str, float], keep: int,
                pending: Generated | None = None, version: int | None = None) -> None:
    """``pending`` and ``version`` (asynchronous training): the iteration generated and not yet
    trained, kept whole so that a resumed run trains it once, and the updates applied so far."""
    c = run.components
    state = {"corpus": c.corpus.state_dict(), "totals": totals,
             "pool": run.pool.state_dict() if run.pool is not None else None,
             "window": run.schedule.state_dict()}
    if version is not None:
        state["policy_version"] = version
        state["pending"] = pending.to_dict() if pending is not None else None
    save_checkpoint(run.artifacts.run_dir, next_iteration, state, c.trainer, c.memory, keep)


def _restore(run: SelfPlayRun, checkpoint: Path, state: dict[str, Any], start: int) -> str | None:
    """Put every component back where the checkpoint left it (the window in progress included);
    drop later metrics and replay rows. Returns a note for the user, or ``None``."""
    c, pool = run.components, run.pool
    c.corpus.load_state_dict(state["corpus"])
    run.schedule.load_state_dict(state.get("window"))
    if pool is not None:
        if state.get("pool") is None:
            raise ConfigError(f"{checkpoint}: taken in selfplay mode; resume it with loop.mode "
                              "selfplay")
        pool.load_state_dict(state["pool"])
    if state.get("trainer"):
        c.trainer.load(checkpoint / "trainer")
    restore_memory(c.memory, checkpoint, state.get("memory"))  # the open memory restores itself
    note = load_rng(checkpoint)
    for log in ("metrics.jsonl", "replays.jsonl"):  # iterations after the checkpoint run again
        truncate_jsonl(run.artifacts.run_dir / log, start)
    return note
