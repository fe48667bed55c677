"""A run's set-up: the configured components built in dependency order (and closed, whatever
happens), and the loop's parts around them (the fixed pool, the window schedule, the
contamination guard, the in-run evaluator), gathered in one :class:`SelfPlayRun` that every step
of an iteration reads."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from spade_core.components import BuildContext
from spade_core.config.load import ResolvedConfig
from spade_core.config.schema import LoopSection
from spade_core.distributed import LaunchInfo
from spade_core.errors import ConfigError
from spade_core.eval.loop import LoopEvaluator, open_evaluator
from spade_core.phases import PhaseTimer
from spade_core.plugins import LoadedPlugins
from spade_core.run_info import RunInfo
from spade_core.selfplay.artifacts import RunArtifacts
from spade_core.selfplay.built_components import Components
from spade_core.selfplay.contamination import ContaminationGuard, open_guard
from spade_core.selfplay.pipeline import versioned
from spade_core.selfplay.pool import PoolSampler, load_pool
from spade_core.selfplay.schedule import FrontierSchedule, Schedule, open_schedule
from spade_core.selfplay.validator import LLMValidator
from spade_core.validation import ValidationOptions

Reporter = Callable[[str], None]


def stderr_reporter(message: str) -> None:
    """The default reporter: a line on standard error."""
    print(message, file=sys.stderr, flush=True)


@dataclass
class SelfPlayRun:
    """What every step of an iteration reads: the built components, the resolved config, the
    run directory's writer, the run's ``run_info`` and hooks, and the loop's parts (``pool``:
    the fixed pool of ``loop.mode: fixed-pool``; ``schedule``: the frontier or the window
    schedule, ``loop.schedule``; the contamination ``guard`` and the in-run ``evaluator``, each
    ``None`` when off)."""

    components: Components
    resolved: ResolvedConfig
    artifacts: RunArtifacts
    run_info: RunInfo
    hook: Any
    pool: PoolSampler | None = None
    schedule: Schedule = field(default_factory=FrontierSchedule)
    guard: ContaminationGuard | None = None
    evaluator: LoopEvaluator | None = None
    #: Closed by the run in reverse order whatever happens (components included).
    opened: list[Any] = field(default_factory=list)

    @property
    def loop(self) -> LoopSection:
        return self.resolved.config.loop

    def seed(self, iteration: int) -> int:
        """The iteration's seed: documents, designs, plays and draws all derive from it."""
        return self.resolved.config.run.seed * 1_000_003 + iteration * 7919

    def timer(self, iteration: int) -> PhaseTimer:
        """A phase timer for ``iteration`` that reports progress through the hooks."""
        return PhaseTimer(lambda phase, completed, total: self.hook.spade_phase_progress(
            run_info=self.run_info, iteration=iteration, phase=phase, completed=completed,
            total=total))


def open_run(resolved: ResolvedConfig, loaded: LoadedPlugins, artifacts: RunArtifacts,
             run_info: RunInfo, opened: list[Any], *, backend: Any = None, trainer: Any = None,
             launch: LaunchInfo = LaunchInfo()) -> SelfPlayRun:
    """Build the components and the loop's parts of a run writing to ``artifacts`` (each
    closable part appended to ``opened``)."""
    config = resolved.config
    run_dir = artifacts.run_dir
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
    return SelfPlayRun(components=components, resolved=resolved, artifacts=artifacts,
                       run_info=run_info, hook=loaded.manager.hook, pool=pool,
                       schedule=open_schedule(config.loop), guard=guard, evaluator=evaluator,
                       opened=opened)


def component_builder(resolved: ResolvedConfig, run_dir: Path | None, seed: int,
                      opened: list[Any], built: dict[str, Any], launch: LaunchInfo
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
    build, context = component_builder(resolved, run_dir, seed, opened, built, launch)
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
    require_followers(resolved, trainer, launch)
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


def require_followers(resolved: ResolvedConfig, trainer: Any, launch: LaunchInfo) -> None:
    """Refuse a multi-process launch with a trainer that cannot lead follower ranks."""
    if launch.distributed and not getattr(trainer, "supports_followers", False):
        name = resolved.components["trainer"].component.name
        raise ConfigError(
            f"{resolved.source}: trainer {name!r} cannot run under a multi-process launch "
            f"({launch.world_size} processes); launch one process (plain `spade run`) or select "
            "trainer: grpo")


def close_all(opened: list[Any], report: Reporter) -> None:
    """Close everything in ``opened``, last first; a failure to close is reported, never
    raised (it must not hide the run's outcome)."""
    for instance in reversed(opened):
        try:
            instance.close()
        except Exception as exc:  # noqa: BLE001 - closing must not hide the run's outcome
            report(f"warning: closing {type(instance).__name__} failed: {exc}")
