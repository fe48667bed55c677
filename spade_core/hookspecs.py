"""The hooks a spade plugin can implement (pluggy project name ``spade``).

Registration hooks receive a ``register`` callback instead of returning values (the pattern of
simonw/llm): the core can add keyword arguments later without breaking plugins, since pluggy only
passes an implementation the arguments it names. Each call of ``register`` declares one component::

    register(name, factory, options=None, summary="")

``factory(options, context)`` builds the component: ``options`` is an instance of the ``options``
pydantic model validated from the config (or ``{}`` when the plugin declares none) and ``context``
is a :class:`spade_core.components.BuildContext`. The optional keyword ``preflight=check`` adds a
check of the options against this machine, ``check(options, preflight) -> problems`` (a
:class:`~spade_core.config.preflight.PreflightContext`), run before anything is built
(:mod:`spade_core.config.preflight`).

Run-event hooks are called by the loop; loggers and reporters implement them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from spade_core.commands import RegisterCommand
    from spade_core.components import Register
    from spade_core.records import EnvRecord
    from spade_core.run_info import RunInfo

PROJECT = "spade"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_corpus_samplers(register: "Register") -> None:
    """Register corpus samplers (interface :class:`spade_core.interfaces.CorpusSampler`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_prompt_strategies(register: "Register") -> None:
    """Register designer prompt strategies (interface :class:`spade_core.interfaces.PromptStrategy`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_difficulty_estimators(register: "Register") -> None:
    """Register difficulty estimators (interface
    :class:`spade_core.interfaces.DifficultyEstimator`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_sandboxes(register: "Register") -> None:
    """Register sandboxes (interface :class:`spade_core.interfaces.Sandbox`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_trainers(register: "Register") -> None:
    """Register trainers (interface :class:`spade_core.interfaces.Trainer`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_env_families(register: "Register") -> None:
    """Register environment families (interface :class:`spade_core.interfaces.EnvFamily`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_env_memories(register: "Register") -> None:
    """Register environment memories (interface :class:`spade_core.interfaces.EnvMemory`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_generation_backends(register: "Register") -> None:
    """Register generation backends (interface :class:`spade_core.interfaces.GenerationBackend`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_eval_suites(register: "Register") -> None:
    """Register held-out evaluation suites (interface :class:`spade_core.interfaces.EvalSuite`),
    run by ``spade eval``.

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_export_formats(register: "Register") -> None:
    """Register formats of ``spade envs export --format NAME`` (interface
    :class:`spade_core.interfaces.ExportFormat`).

    :param register: callback ``register(name, factory, options=None, summary="")``.
    """


@hookspec
def register_commands(register: "RegisterCommand") -> None:
    """Register command-line commands: top-level ``spade NAME`` commands, or members of a core
    command group such as ``spade bench NAME`` (see :mod:`spade_core.commands`).

    :param register: callback ``register(name, add_arguments, run, help="", group=None)``:
        ``name`` is the command's word on the command line; ``add_arguments(parser)`` fills an
        ``argparse.ArgumentParser`` (light code only: it runs for ``--help``, and only when this
        command is the one typed); ``run(args) -> int`` runs the command with the parsed
        ``argparse.Namespace`` and returns its exit status (import heavy libraries here);
        ``help`` is the one line ``spade --help`` shows; ``group`` is ``None`` for a top-level
        command or the core command it goes under (``"bench"``).
    """


@hookspec
def spade_run_start(run_info: "RunInfo") -> None:
    """A run starts, after the config is validated and the run directory written.

    :param run_info: the run's directory, resolved config and iteration counter.
    """


@hookspec
def spade_iteration_end(run_info: "RunInfo", iteration: int, metrics: dict[str, Any]) -> None:
    """One self-play iteration has finished.

    :param run_info: the run (:class:`~spade_core.run_info.RunInfo`).
    :param iteration: the iteration number, from 0.
    :param metrics: flat name -> number mapping of this iteration's figures.
    """


@hookspec
def spade_phase_progress(run_info: "RunInfo", iteration: int, phase: str, completed: int,
                         total: int | None) -> None:
    """Progress inside an iteration: ``completed`` of ``total`` items of ``phase`` are done.

    Phases are ``sample``, ``design``, ``validate``, ``dedupe``, ``hint``, ``rollout``,
    ``estimate`` and ``train``; ``validate`` runs beside ``design``. Called from worker threads
    too, often (once per finished episode): keep it cheap.

    :param run_info: the run (:class:`~spade_core.run_info.RunInfo`).
    :param iteration: the iteration number, from 0.
    :param phase: the phase's name.
    :param completed: items of the phase done so far in this iteration.
    :param total: items expected so far (it grows when a phase is entered again), or ``None``.
    """


@hookspec
def spade_env_accepted(run_info: "RunInfo", record: "EnvRecord") -> None:
    """An environment passed validation and deduplication and will be played.

    :param run_info: the run (:class:`~spade_core.run_info.RunInfo`).
    :param record: the environment's memory record.
    """


@hookspec
def spade_env_mastered(run_info: "RunInfo", record: "EnvRecord") -> None:
    """An environment reached the mastery threshold and will not be issued again.

    :param run_info: the run (:class:`~spade_core.run_info.RunInfo`).
    :param record: the environment's memory record.
    """


@hookspec
def spade_run_end(run_info: "RunInfo", status: str, error: str | None) -> None:
    """A run ends, normally (``status="completed"``) or not (``"failed"``, ``"interrupted"``).

    :param run_info: the run (:class:`~spade_core.run_info.RunInfo`).
    :param status: how it ended.
    :param error: the error message when it failed, else ``None``.
    """


@hookspec
def spade_preflight(config: Any, report: Any) -> None:
    """Check a validated config against this machine before anything heavy starts (``spade config
    check``, and ``spade run`` before it builds anything), for config sections that are not
    components, such as ``logging``; a component checks its own options through
    ``register(..., preflight=check)`` (:mod:`spade_core.config.preflight`). Import nothing heavy:
    look at files, find packages with ``importlib.util.find_spec``, never download.

    :param config: the resolved config (:class:`spade_core.config.load.ResolvedConfig`;
        ``config.config.logging``, ``config.config.model.path``, ...).
    :param report: callback ``report(key, message)``: ``key`` is the config key path at fault
        (``logging.backends``), ``message`` says what is wrong and what would be right.
    """
