"""A whole run: build the configured components, iterate, write the run directory, fire events.

Components are built in dependency order (backend before trainer) and always closed, whatever
happens; a failure ends the run with ``status: failed`` in ``summary.json`` and every finished
iteration's data on disk.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

from spade_core.components import BuildContext
from spade_core.config.load import ResolvedConfig
from spade_core.distributed import LaunchInfo, launch_info
from spade_core.errors import ConfigError, PluginError, SpadeError
from spade_core.interfaces import TrainingSample
from spade_core.plugins import LoadedPlugins
from spade_core.records import EnvStatus
from spade_core.run_info import RunInfo
from spade_core.selfplay.artifacts import RunArtifacts
from spade_core.selfplay.checkpoint import (
    CheckpointError,
    load_rng,
    read_state,
    restore_memory,
    resumable_checkpoint,
    save_checkpoint,
    set_aside,
    truncate_jsonl,
)
from spade_core.selfplay.stop import RunStopped, StopRequest
from spade_core.selfplay.contamination import ContaminationGuard, open_guard
from spade_core.eval.loop import LoopEvaluator, open_evaluator
from spade_core.selfplay.iteration import (
    Components,
    PhaseTimer,
    Proposal,
    dedupe,
    design,
    draw_from_pool,
    draw_replay,
    estimate,
    play,
    retire_aged,
    window_replays,
)
from spade_core.selfplay.metrics import iteration_metrics, window_metrics
from spade_core.phases import CountingBackend, tokens_by_role
from spade_core.selfplay.pipeline import (
    BackgroundTrainer,
    Generated,
    Trained,
    VersionedBackend,
    pipeline_metrics,
    stamp_samples,
    versioned,
)
from spade_core.selfplay.pool import PoolSampler, load_pool
from spade_core.selfplay.samples import (
    agent_samples,
    designer_samples,
    scale_designer,
    training_samples,
)
from spade_core.selfplay.validator import LLMValidator
from spade_core.selfplay.window import Delayed, HeldDesign, Window, Windows, release
from spade_core.messages import plural
from spade_core.validation import ValidationOptions

Reporter = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _builder(resolved: ResolvedConfig, run_dir: Path | None, seed: int, opened: list[Any],
             built: dict[str, Any], launch: LaunchInfo
             ) -> tuple[Callable[[str], Any], Callable[[], BuildContext]]:
    """``build(section)``, which builds one config section's component with the components built
    so far in its context and records it in ``opened`` (to close) and ``built`` (by kind); and
    ``context()``, that context."""

    def context() -> BuildContext:
        return BuildContext(run_dir=run_dir, seed=seed, components=MappingProxyType(built),
                            model=resolved.config.model.path,
                            success_threshold=resolved.config.loop.success_threshold,
                            rank=launch.rank, world_size=launch.world_size)

    def build(section: str) -> Any:
        rc = resolved.components[section]
        instance = rc.component.build(rc.options, context())
        built[rc.component.kind] = instance
        opened.append(instance)
        return instance

    return build, context


def build_components(resolved: ResolvedConfig, run_dir: Path, seed: int,
                     opened: list[Any], backend: Any = None,
                     launch: LaunchInfo = LaunchInfo(), trainer: Any = None) -> Components:
    """Build every selected component; each is appended to ``opened`` so it can be closed.
    ``backend`` and ``trainer``, when given, replace the configured generation backend and
    trainer (benchmarks). With ``loop.async_level`` above 0 the backend is wrapped in a
    :class:`~spade_core.selfplay.pipeline.VersionedBackend` before the trainer is built, so that
    the trainer's weight pushes go through it."""
    built: dict[str, Any] = {}
    build, context = _builder(resolved, run_dir, seed, opened, built, launch)
    # First, as it is light and needs no other component: an estimator that does not fit its
    # interface is refused before the model loads.
    estimator = build("estimator")
    if backend is None:
        backend = build("backend")
    else:
        built["generation_backend"] = backend
    if resolved.config.loop.async_level:
        backend = built["generation_backend"] = versioned(backend)
    sandbox = build("sandbox")
    memory = build("memory")
    corpus = build("corpus")
    designer = build("designer")
    families = [rc.component.build(rc.options, context()) for rc in resolved.families]
    if trainer is None:
        trainer = build("trainer")
    else:
        built["trainer"] = trainer
    _require_followers(resolved, trainer, launch)
    hint_backend = None
    if "hints.backend" in resolved.components:  # built last: the trainer gets the policy's
        rc = resolved.components["hints.backend"]
        hint_backend = rc.component.build(rc.options, context())
        opened.append(hint_backend)
    return Components(corpus=corpus, designer=designer, families=families, sandbox=sandbox,
                      estimator=estimator, memory=memory, backend=backend, trainer=trainer,
                      validation=ValidationOptions.from_config(resolved.config),
                      hint_backend=hint_backend, hint_prompt=resolved.config.hints.prompt,
                      llm_validator=_llm_validator(resolved, context, opened),
                      estimator_label=_label(resolved.components["estimator"].component))


def _label(component: Any) -> str:
    """A component as errors name it: kind, registered name, plugin and distribution."""
    from spade_core.components import KIND_BY_NAME

    return (f"{KIND_BY_NAME[component.kind].label} {component.name!r} (plugin "
            f"{component.plugin!r} from {component.distribution} {component.version})")


def _llm_validator(resolved: ResolvedConfig, context: Callable[[], BuildContext],
                   opened: list[Any]) -> LLMValidator | None:
    """``validation.llm`` when enabled, with its own backend built (after the trainer, like
    ``hints.backend``) when one is selected; ``None`` when off."""
    section = resolved.config.validation.llm
    if not section.enabled:
        return None
    backend = None
    if "validation.llm.backend" in resolved.components:
        rc = resolved.components["validation.llm.backend"]
        backend = rc.component.build(rc.options, context())
        opened.append(backend)
    return LLMValidator.from_config(section, backend)


def _require_followers(resolved: ResolvedConfig, trainer: Any, launch: LaunchInfo) -> None:
    if launch.distributed and not getattr(trainer, "supports_followers", False):
        name = resolved.components["trainer"].component.name
        raise ConfigError(
            f"{resolved.source}: trainer {name!r} cannot run under a multi-process launch "
            f"({launch.world_size} processes); launch one process (plain `spade run`) or select "
            "trainer: grpo")


def follow(resolved: ResolvedConfig, launch: LaunchInfo, report: Reporter = _stderr) -> None:
    """A follower rank's whole run: build the generation backend and the trainer only, then carry
    out the main process's training calls until it closes the trainer (see
    ``spade_core.distributed``). Writes nothing to the run directory."""
    opened: list[Any] = []
    try:
        build, _ = _builder(resolved, None, resolved.config.run.seed, opened, {}, launch)
        build("backend")
        trainer = build("trainer")
        _require_followers(resolved, trainer, launch)
        trainer.follow()
    finally:
        _close_all(opened, report)


def _close_all(opened: list[Any], report: Reporter) -> None:
    for instance in reversed(opened):
        try:
            instance.close()
        except Exception as exc:  # noqa: BLE001 - closing must not hide the run's outcome
            report(f"warning: closing {type(instance).__name__} failed: {exc}")


#: How much of the grounding document ``envs/<id>.json`` keeps (``doc_text``; ``doc_chars`` is
#: its full length): enough to recognise it in the report without copying the corpus.
DOC_TEXT_CHARS = 2000
#: How much of each message of the designer's prompt ``envs/<id>.json`` keeps
#: (``designer_prompt``); the skeleton and instructions fit, a long document is cut.
PROMPT_MESSAGE_CHARS = 8000


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more chars]"


def _env_details(iteration: int, p: Proposal) -> dict[str, Any]:
    return {
        "id": p.env_id, "iteration": iteration, "family": p.family.name, "status": p.status,
        "doc_id": p.document.id, "doc_text": _clip(p.document.text, DOC_TEXT_CHARS),
        "doc_chars": len(p.document.text),
        "designer_prompt": [{"role": str(m.get("role", "")),
                             "content": _clip(str(m.get("content", "")), PROMPT_MESSAGE_CHARS)}
                            for m in p.prompt],
        "verdict": asdict(p.verdict) if p.verdict else None,
        "attempts": len(p.completions), "attempt_categories": p.attempt_categories,
        "repairs": p.repairs, "skill": p.target.skill, "level": p.target.level,
        "variant": dict(p.target.variant),
        "duplicate_of": p.duplicate_of, "duplicate_similarity": p.similarity, "hint": p.hint,
        "hint_redacted": p.hint_redacted,
        "hint_diagnostics": p.hint_diagnostics.to_dict() if p.hint_diagnostics else None,
        "difficulty": asdict(p.difficulty) if p.difficulty else None,
        "designer_reward": p.designer_reward,
        "hinted_rewards": [e.reward for e in p.hinted],
        "unhinted_rewards": [e.reward for e in p.unhinted],
        "sample_unhinted": asdict(p.unhinted[0]) if p.unhinted else None,
        "sample_hinted": asdict(p.hinted[0]) if p.hinted else None,
        "failed_unhinted": [asdict(e) for e in p.failed],
        "designer_completion": p.completions[-1] if p.completions else "",
    }


def _delayed_details(item: Delayed, iteration: int) -> dict[str, Any]:
    return {"window_start": item.window_start, "released_at": iteration,
            "designer_reward": item.designer_reward, "figures": item.figures,
            "trained": item.trained}


def _replay_details(iteration: int, p: Proposal) -> dict[str, Any]:
    return {"id": p.env_id, "iteration": iteration, "family": p.family.name,
            "status": p.status, "difficulty": asdict(p.difficulty) if p.difficulty else None,
            "hint_diagnostics": (p.hint_diagnostics.to_dict()
                                 if p.hinted and p.hint_diagnostics else None),
            "hinted_rewards": [e.reward for e in p.hinted],
            "unhinted_rewards": [e.reward for e in p.unhinted]}


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


def run(resolved: ResolvedConfig, loaded: LoadedPlugins, report: Reporter = _stderr,
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
    artifacts = RunArtifacts(run_dir)
    checkpoint = None
    state: dict[str, Any] = {}
    if resume is not None:
        checkpoint = _resume_point(run_dir, report)
        state = read_state(checkpoint)
    artifacts.create(resolved.to_dict())
    context = RunInfo(run_dir=run_dir, config=resolved.to_dict(), seed=config.run.seed)
    start = int(state.get("next_iteration", 0))
    context.iteration = start
    if checkpoint is not None:
        context.extra["resumed_from"] = start
        context.extra["checkpoint"] = str(checkpoint)
    hook = loaded.manager.hook
    opened: list[Any] = []
    status, error, started = "failed", None, time.time()
    resumable = True
    totals: dict[str, float] = dict(state.get("totals", {}))
    completed = start
    stop = StopRequest()
    try:
        stop.install(report)
        report(f"spade: run directory {run_dir}"
               + (f" (resuming at iteration {start} from {checkpoint.name})" if checkpoint else ""))
        if launch.distributed:
            report(f"spade: main process of {launch.world_size}; the others train their shard")
        components = build_components(resolved, run_dir, config.run.seed, opened,
                                      backend=backend, launch=launch, trainer=trainer)
        suite_context = BuildContext(
            run_dir=run_dir, seed=config.run.seed, model=config.model.path,
            success_threshold=config.loop.success_threshold,
            components={"generation_backend": components.backend,
                        "sandbox": components.sandbox, "env_family": components.families})
        guard = open_guard(resolved, loaded.registry, run_dir, suite_context)
        if guard is not None:
            opened.append(guard)
        evaluator = open_evaluator(resolved, loaded.registry, suite_context)
        if evaluator is not None:
            opened.append(evaluator)
        pool = None
        if config.loop.mode == "fixed-pool":
            pool = PoolSampler(load_pool(resolved, components.families, components.sandbox))
        windows = (Windows(config.loop.regeneration_interval)
                   if config.loop.schedule == "window" else None)
        if checkpoint is not None:
            note = _restore(components, checkpoint, state, pool, artifacts, start, windows)
            if note:
                report(f"spade: warning: {note}")
        else:
            if pool is not None:
                added = pool.seed_memory(components.memory)
                report(f"spade: fixed pool of {plural(len(pool.envs), 'environment')} ({added} "
                       "new to the memory)")
            if config.checkpoint.every:
                _checkpoint(run_dir, 0, components, pool, totals, config.checkpoint.keep,
                            windows)
        isolation = components.sandbox.isolation()
        artifacts.append_jsonl("isolation.jsonl", {"time": time.time(), **isolation})
        hook.spade_run_start(run=context)
        if config.loop.async_level:
            pending = Generated.from_dict(state["pending"]) if state.get("pending") else None
            if pending is not None:  # trained after the checkpoint: its row comes again
                truncate_jsonl(run_dir / "metrics.jsonl", pending.iteration)
            flow = AsyncLoop(components, resolved, artifacts, context, loaded, pool, guard,
                             evaluator, windows, totals, report,
                             int(state.get("policy_version", start)), stop)
            try:
                flow.run(start, pending)
            finally:
                completed = flow.completed
            if stop.requested:
                raise stop.stopped(completed, run_dir)
            status = "completed"
            return run_dir
        last: dict[str, Any] | None = None
        saved = start if checkpoint is not None or config.checkpoint.every else None
        for iteration in range(start, config.run.iterations):
            if stop.requested:  # SIGTERM: a checkpoint of what is done, then a clean stop
                if saved != completed:
                    _checkpoint(run_dir, completed, components, pool, totals,
                                max(config.checkpoint.keep, 1), windows)
                raise stop.stopped(completed, run_dir)
            context.iteration = iteration
            metrics = run_iteration(components, resolved, iteration, artifacts, context, loaded,
                                    pool, guard, evaluator, windows, last)
            last = metrics["pipeline"]
            for key in TOTALS:
                totals[key] = totals.get(key, 0) + metrics[key]
            completed = iteration + 1
            report(_iteration_line(metrics))
            every = config.checkpoint.every
            if every and (completed % every == 0 or completed == config.run.iterations):
                _checkpoint(run_dir, completed, components, pool, totals, config.checkpoint.keep,
                            windows)
                saved = completed
        status = "completed"
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
        raise
    except RunStopped as exc:
        status, error = "interrupted", str(exc)
        raise
    except SpadeError as exc:
        error = str(exc)
        # a config or plugin error happens again on resume: fix it first
        resumable = not isinstance(exc, (ConfigError, PluginError))
        raise
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        stop.uninstall()
        _close_all(opened, report)
        summary = {"status": status, "error": error, "iterations_completed": completed,
                   "seconds": round(time.time() - started, 1), **totals}
        if checkpoint is not None:
            summary["resumed_from"] = start
        artifacts.write_summary(summary)
        hook.spade_run_end(run=context, status=status, error=error)
        report(end_message(summary, run_dir, config.run.iterations, resumable))
    return run_dir


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
        raise ConfigError(f"--resume {str(run_dir)!r}: the run has no checkpoint (none is "
                          "written before the run starts when checkpoint.every is 0)")
    return checkpoint


def end_message(summary: dict[str, Any], run_dir: Path, planned: int,
                resumable: bool = True) -> str:
    """The run's last words, for a person: what happened, where it is, what to do next (the
    figures themselves are in ``summary.json``). The error itself is not repeated: it is raised
    to the caller (the command line prints it once). ``resumable``: whether ``--resume`` can
    help (not after a config or plugin error, which would happen again)."""
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


def _checkpoint(run_dir: Path, next_iteration: int, c: Components, pool: Any,
                totals: dict[str, float], keep: int, windows: Windows | None = None,
                pending: Generated | None = None, version: int | None = None) -> None:
    """``pending`` and ``version`` (asynchronous training): the iteration generated and not yet
    trained, kept whole so that a resumed run trains it once, and the updates applied so far."""
    state = {"corpus": c.corpus.state_dict(), "totals": totals,
             "pool": pool.state_dict() if pool is not None else None,
             "window": (windows.current.to_dict()
                        if windows is not None and windows.current is not None else None)}
    if version is not None:
        state["policy_version"] = version
        state["pending"] = pending.to_dict() if pending is not None else None
    save_checkpoint(run_dir, next_iteration, state, c.trainer, c.memory, keep)


def _restore(c: Components, checkpoint: Path, state: dict[str, Any], pool: Any,
             artifacts: RunArtifacts, start: int, windows: Windows | None = None) -> str | None:
    """Put every component back where the checkpoint left it (the window in progress included);
    drop later metrics and replay rows. Returns a note for the user, or ``None``."""
    c.corpus.load_state_dict(state["corpus"])
    if windows is not None and state.get("window"):
        windows.current = Window.from_dict(state["window"])
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
        truncate_jsonl(artifacts.run_dir / log, start)
    return note


def open_window(c: Components, loop: Any, iteration: int,
                proposals: list[Proposal], ledger: dict[str, Any] | None = None) -> Window:
    """The window starting at ``iteration``: the environments played, and the designer's
    samples held with the log-probabilities the policy gives them now (before any update). With
    a ``ledger`` (asynchronous training, the trainer busy on its own thread) they are held with
    the log-probabilities the backend generated them with instead."""
    held = designer_samples(loop, [p for p in proposals if not p.replayed])
    if ledger is not None:
        stamp_samples(held, ledger, iteration, 0)
        logps = None
    else:
        logps = c.trainer.record_logprobs(held) if held else None
    designs = [HeldDesign(env_id=s.group, family=str(s.meta["family"]), messages=s.messages,
                          skill=str(s.meta["skill"]),
                          rollout_logps=logps[k] if logps is not None else None,
                          fixed_reward=None if s.meta["played"] else float(s.reward),
                          meta={k: v for k, v in s.meta.items()
                                if k in ("attempt", "repair", "temperature",
                                         "chat_template_kwargs", "turn_logps")})
               for k, s in enumerate(held)]
    return Window(start=iteration, designs=designs,
                  env_ids=[p.env_id for p in proposals if p.difficulty is not None])


def environments(c: Components, loop: Any, iteration: int, seed: int, timer: PhaseTimer,
                 pool: Any, guard: ContaminationGuard | None, windows: Windows | None,
                 starting: bool, pool_seed: int = 0) -> list[Proposal]:
    """This iteration's environments: inside a window, the window's own, played again; else
    a fixed pool's draw (``pool_seed``: the seed of a ``shuffle`` draw), or the designer's
    proposals (validated, then deduplicated against the memory), plus in the frontier schedule
    frontier environments replayed from the memory."""
    if not starting:
        return window_replays(c, windows.current.env_ids, windows.current.start,
                              drop_timed_out=loop.timeouts == "start")
    if pool is not None:
        chosen = None
        if loop.pool_order == "shuffle":  # one draw per window (per iteration without windows)
            draw = iteration // windows.interval if windows is not None else iteration
            chosen = pool.shuffled(loop.envs_per_iteration, draw, pool_seed)
        return draw_from_pool(c, loop, seed, timer, replays=windows is None, chosen=chosen)
    proposals = design(c, loop, iteration, seed, timer)
    with timer.phase("dedupe", total=sum(1 for p in proposals if p.verdict and p.verdict.valid)):
        dedupe(c, proposals, guard)
        timer.advance("dedupe", sum(1 for p in proposals if p.status in (
            EnvStatus.FRONTIER, EnvStatus.DUPLICATE)))
    if windows is None:
        proposals += draw_replay(c, loop, {p.env_id for p in proposals}, seed, timer)
    return proposals


def run_iteration(c: Components, resolved: ResolvedConfig, iteration: int,
                  artifacts: RunArtifacts, context: RunInfo,
                  loaded: LoadedPlugins, pool: Any = None,
                  guard: ContaminationGuard | None = None,
                  evaluator: LoopEvaluator | None = None,
                  windows: Windows | None = None,
                  previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """One iteration, in order: (a window's start) the previous window's designs rewarded over
    its plays; this iteration's environments; hint and play; estimate and remember; train;
    evaluate; write the artifacts and the metrics row. ``windows`` is ``None`` in the frontier
    schedule. ``previous``: the previous iteration's ``pipeline`` figures, for this one's idle
    seconds."""
    hook = loaded.manager.hook
    timer = _timer(hook, context, iteration)
    started = time.time()
    made = _generate(c, resolved, iteration, context, loaded, pool, guard, windows, timer)
    ended = time.time()
    with timer.phase("train", total=len(made.samples)):
        train_metrics = c.trainer.train(made.samples) or {}
        timer.advance("train", len(made.samples))
    trained = time.time()

    held_out = (evaluator.evaluate(iteration, CountingBackend(c.backend, timer), timer)
                if evaluator else None)
    _write_artifacts(artifacts, iteration, made.proposals, made.delayed)
    metrics = _row(c, resolved, iteration, made, timer, windows, train_metrics)
    generated = Generated(iteration, [], {}, started=started, ended=ended,
                          waited=started - previous["generate_end"] if previous else 0.0)
    metrics["pipeline"] = pipeline_metrics(
        Trained(generated, {}, 0, ended, trained), previous["train_end"] if previous else None, 0)
    metrics["pipeline"].pop("policy_version")
    if held_out is not None:
        metrics["eval"] = held_out
    artifacts.log_metrics(metrics)
    hook.spade_iteration_end(run=context, iteration=iteration, metrics=metrics)
    return metrics


def _timer(hook: Any, context: RunInfo, iteration: int) -> PhaseTimer:
    return PhaseTimer(lambda phase, completed, total: hook.spade_phase_progress(
        run=context, iteration=iteration, phase=phase, completed=completed, total=total))


class _Made:
    """What one iteration's generation produced."""

    def __init__(self, proposals: list[Proposal], samples: list[TrainingSample],
                 mastered: list[Any], retired: list[Any], released: list[TrainingSample],
                 delayed: list[Delayed] | None = None) -> None:
        self.proposals, self.samples = proposals, samples
        self.mastered, self.retired, self.released = mastered, retired, released
        self.delayed = delayed or []


def _generate(c: Components, resolved: ResolvedConfig, iteration: int, context: RunInfo,
              loaded: LoadedPlugins, pool: Any, guard: ContaminationGuard | None,
              windows: Windows | None, timer: PhaseTimer,
              ledger: Callable[[], dict[str, Any]] | None = None) -> _Made:
    """An iteration up to its samples: (a window's start) the previous window's designs
    released; the environments; hint and play; estimate and remember. ``ledger`` (asynchronous
    training): takes the backend's record of what it generated, for the held designs."""
    loop = resolved.config.loop
    seed = resolved.config.run.seed * 1_000_003 + iteration * 7919
    hook = loaded.manager.hook
    starting = windows is None or windows.starts(iteration)
    # The policy's (and the hint model's) generated tokens, counted per phase for ``tokens``.
    c = replace(c, backend=CountingBackend(c.backend, timer),
                hint_backend=(CountingBackend(c.hint_backend, timer)
                              if c.hint_backend is not None else None))

    released: list[TrainingSample] = []
    delayed: list[Delayed] = []
    if windows is not None and starting and windows.current is not None:
        released, delayed = release(c.estimator, c.memory, windows.current,
                                    loop.success_threshold, c.estimator_label, loop.timeouts,
                                    windows.interval)

    proposals = environments(c, loop, iteration, seed, timer, pool, guard, windows, starting,
                             loop.pool_seed if loop.pool_seed is not None
                             else resolved.config.run.seed)
    play(c, loop, proposals, seed, timer, hinted=starting)

    # The environments estimated: those played (a rejected or duplicate proposal is not, so a
    # run that plays nothing shows "estimate: 0/0", not every proposal as estimated).
    estimated = sum(1 for p in proposals if p.status == EnvStatus.FRONTIER and p.unhinted)
    with timer.phase("estimate", total=estimated):
        mastered = estimate(c, loop, proposals, iteration)
        retired = retire_aged(c, loop, proposals) if windows is None else []
        timer.advance("estimate", estimated)
    for p in proposals:
        if p.status not in (EnvStatus.REJECTED, EnvStatus.DUPLICATE):
            record = c.memory.get(p.env_id)
            if record is not None:
                hook.spade_env_accepted(run=context, record=record)
    for record in mastered:
        hook.spade_env_mastered(run=context, record=record)

    if windows is None:
        samples = training_samples(loop, proposals)
    else:
        if starting:
            windows.current = open_window(c, loop, iteration, proposals,
                                          ledger() if ledger is not None else None)
        samples = scale_designer(loop, released + agent_samples(loop, proposals),
                                 windows.interval)
    return _Made(proposals, samples, mastered, retired, released, delayed)


def _write_artifacts(artifacts: RunArtifacts, iteration: int, proposals: list[Proposal],
                     delayed: list[Delayed] = ()) -> None:
    """``envs/<id>.json`` of each new environment (a replay: a line of ``replays.jsonl``, the
    iteration's lines appended together with one fsync); the window schedule's delayed designer
    rewards released this iteration go into their environments' files (``delayed``)."""
    artifacts.append_jsonl_rows("replays.jsonl", [_replay_details(iteration, p)
                                                  for p in proposals if p.replayed])
    for p in proposals:
        if not p.replayed:
            artifacts.write_env(p.env_id,
                                p.program or (p.completions[-1] if p.completions else ""),
                                _env_details(iteration, p))
    for item in delayed:
        artifacts.add_env_details(item.env_id, {"delayed": _delayed_details(item, iteration)})


def _row(c: Components, resolved: ResolvedConfig, iteration: int, made: _Made,
         timer: PhaseTimer, windows: Windows | None,
         train_metrics: dict[str, Any] | None) -> dict[str, Any]:
    """The iteration's ``metrics.jsonl`` row, ``train`` as given (``{}`` until it is known)."""
    loop = resolved.config.loop
    metrics = iteration_metrics(iteration, made.proposals, len(made.mastered), timer,
                                loop.success_threshold, retired=len(made.retired),
                                memory_counts=c.memory.stats().get("by_status", {}))
    metrics["train"] = train_metrics or {}
    metrics["tokens"] = tokens_by_role(timer)
    if windows is not None:
        metrics["window"] = window_metrics(windows.current, iteration, made.released)
    metrics["corpus_state"] = c.corpus.state_dict()
    metrics["mode"] = loop.mode
    return metrics


#: Running totals of ``summary.json``, summed over the iterations' rows.
TOTALS = ("envs_proposed", "envs_valid", "envs_duplicate", "envs_played", "envs_mastered")


class AsyncLoop:
    """The iterations with ``loop.async_level`` K above 0: iteration i+1 is generated on this
    thread while iteration i trains on the trainer's, generation waiting only when the trainer
    is more than K updates behind. Rows are written in order once their update is done; a
    checkpoint waits for the trainer to finish everything before the iteration just generated,
    which it keeps, untrained, to train first on resume."""

    def __init__(self, c: Components, resolved: ResolvedConfig, artifacts: RunArtifacts,
                 context: RunInfo, loaded: LoadedPlugins, pool: Any,
                 guard: ContaminationGuard | None, evaluator: LoopEvaluator | None,
                 windows: Windows | None, totals: dict[str, float], report: Reporter,
                 version: int, stop: StopRequest | None = None) -> None:
        self.c, self.resolved, self.artifacts, self.context = c, resolved, artifacts, context
        self.loaded, self.pool, self.guard, self.evaluator = loaded, pool, guard, evaluator
        self.windows, self.totals, self.report = windows, totals, report
        self.stop = stop
        self.level = resolved.config.loop.async_level
        self.backend = c.backend if isinstance(c.backend, VersionedBackend) else None
        if self.backend is not None:
            self.backend.mark(version)
            self.backend.take_ledger()  # pushes and calls of the restore are no samples
        self.trainer = BackgroundTrainer(c.trainer, self.backend, self.level, version)
        self.completed = 0
        self._train_end: float | None = None
        self._generate_end: float | None = None

    def run(self, start: int, pending: Generated | None) -> None:
        config = self.resolved.config
        every, last = config.checkpoint.every, config.run.iterations
        self.completed = pending.iteration if pending is not None else start
        try:
            if pending is not None:
                self.trainer.submit(pending)
            for iteration in range(start, last):
                if self.stop is not None and self.stop.requested:  # SIGTERM: train what is
                    last = iteration  # generated, checkpoint it, stop
                    every = every or 1
                    break
                self.context.iteration = iteration
                self._finish(self.trainer.collect(keep=self.level)[0])
                generated = self._generate(iteration)
                for key in TOTALS:
                    self.totals[key] = self.totals.get(key, 0) + generated.row[key]
                if every and (iteration + 1) % every == 0 and iteration + 1 < last:
                    self._finish(self.trainer.collect(keep=0)[0])
                    _checkpoint(self.artifacts.run_dir, iteration + 1, self.c, self.pool,
                                self.totals, config.checkpoint.keep, self.windows,
                                pending=generated, version=self.trainer.version)
                self.trainer.submit(generated)
            self._finish(self.trainer.collect(keep=0)[0])
            if every and last > start:
                _checkpoint(self.artifacts.run_dir, last, self.c, self.pool, self.totals,
                            max(config.checkpoint.keep, 1), self.windows, pending=None,
                            version=self.trainer.version)
        finally:
            self.trainer.close()

    def _generate(self, iteration: int) -> Generated:
        hook = self.loaded.manager.hook
        timer = _timer(hook, self.context, iteration)
        started = time.time()
        floor = self.backend.version if self.backend is not None else self.trainer.version
        book: dict[str, Any] = {}

        def ledger() -> dict[str, Any]:  # what the backend generated so far this iteration
            if self.backend is not None:
                book.update(self.backend.take_ledger())
            return book

        made = _generate(self.c, self.resolved, iteration, self.context, self.loaded, self.pool,
                         self.guard, self.windows, timer, ledger)
        stamp_samples(made.samples, ledger(), iteration, floor)
        _write_artifacts(self.artifacts, iteration, made.proposals, made.delayed)
        row = _row(self.c, self.resolved, iteration, made, timer, self.windows, None)
        ended = time.time()
        waited = started - self._generate_end if self._generate_end is not None else 0.0
        self._generate_end = ended
        return Generated(iteration, made.samples, row, started=started, ended=ended,
                         waited=waited)

    def _finish(self, done: list[Trained]) -> None:
        """Write the rows of iterations whose update is done (evaluated now: in-run evaluation
        sees the weights of that update or a later one)."""
        hook = self.loaded.manager.hook
        for trained in done:
            iteration = trained.generated.iteration
            metrics = trained.generated.row
            metrics["train"] = trained.metrics
            metrics["seconds"]["train"] = trained.ended - trained.started
            metrics["pipeline"] = pipeline_metrics(trained, self._train_end, self.level)
            self._train_end = trained.ended
            if self.evaluator is not None:
                timer = _timer(hook, self.context, iteration)
                counted = CountingBackend(self.c.backend, timer)
                held_out = self.evaluator.evaluate(iteration, counted, timer)
                if held_out is not None:
                    metrics["eval"] = held_out
                    for role, count in tokens_by_role(timer).items():
                        metrics["tokens"][role] = metrics["tokens"].get(role, 0) + count
            self.artifacts.log_metrics(metrics)
            hook.spade_iteration_end(run=self.context, iteration=iteration, metrics=metrics)
            self.completed = iteration + 1
            self.report(_iteration_line(metrics))


def _nothing_played(m: dict[str, Any]) -> bool:
    """Whether an iteration's metrics row played no environment: its regret and success figures
    are then placeholders (0), shown as "n/a"."""
    return not m.get("envs_played")


def _iteration_line(m: dict[str, Any]) -> str:
    if _nothing_played(m):
        figures = "regret n/a, "
        tail = "success n/a (nothing played"
        tail += (f": 0 of {m['envs_proposed']} proposals valid)" if not m["envs_valid"] else ")")
    else:
        figures = f"regret {m['mean_regret']:.3f}, "
        tail = (f"success {m['agent_success_unhinted']:.2f} unhinted / "
                f"{m['agent_success_hinted']:.2f} hinted")
    return (f"iteration {m['iteration']}: proposed {m['envs_proposed']}, valid {m['envs_valid']}, "
            f"duplicate {m['envs_duplicate']}, played {m['envs_played']}, {figures}designer "
            f"reward {m['mean_designer_reward']:.3f}, {tail}; "
            + ", ".join(f"{k} {v:.1f}s" for k, v in m["seconds"].items()))
