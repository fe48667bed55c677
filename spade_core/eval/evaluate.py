"""Build the configured backend, the sandbox (and the families when a suite plays programs), the
selected suites, and play them: what ``spade eval`` and :func:`spade_core.evaluate` run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import ValidationError

from spade_core.components import BuildContext, Registry
from spade_core.errors import ConfigError
from spade_core.eval.scores import SuiteResult, run_suite
from spade_core.interfaces import EvalSettings, EvalSuite, GenerationBackend

#: Suites (by registered name) that play programs with the config's families.
FAMILY_SUITES = frozenset({"programs"})


@dataclass
class EvalRequest:
    """What to evaluate and how (``None``: take it from the config)."""

    suites: list[str]
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    limit: int | None = None
    samples: int = 1
    temperature: float | None = None
    max_new_tokens: int | None = None
    seed: int | None = None
    model_override: str | None = None
    #: Keep each item's prompt, replies, extracted answers and scores in the result.
    save_replies: bool = False
    #: ``eval.data``: each suite's data location, set as its ``data`` option (:func:`with_data`).
    data: dict[str, Any] = field(default_factory=dict)


def settings_for(resolved: Any, request: EvalRequest) -> EvalSettings:
    """How ``request`` plays the items: its settings, else temperature 0 for one sample (0.8
    for more), ``loop.agent_max_tokens`` and ``run.seed`` of the config."""
    loop = resolved.config.loop
    temperature = request.temperature
    if temperature is None:
        temperature = 0.0 if request.samples == 1 else 0.8
    return EvalSettings(
        samples=request.samples, temperature=temperature,
        max_new_tokens=request.max_new_tokens or loop.agent_max_tokens,
        seed=resolved.config.run.seed if request.seed is None else request.seed,
        max_turns=loop.max_turns, success_threshold=loop.success_threshold)


def evaluate(resolved: Any, registry: Registry, request: EvalRequest,
             checkpoint: str | None = None, backend: GenerationBackend | None = None
             ) -> tuple[list[SuiteResult], dict[str, Any]]:
    """Play every requested suite with the config's backend (or ``backend``), after merging
    ``checkpoint`` into it; returns the results and the settings used. Components built here are
    closed before returning."""
    settings = settings_for(resolved, request)
    chosen = [(name, *resolve_suite(registry, name, request.options.get(name, {}),
                                    request.data.get(name)))
              for name in request.suites]  # before any model is loaded
    check_suites(resolved, chosen)
    opened: list[Any] = []
    scored: str | None = None
    context = BuildContext(seed=settings.seed, model=resolved.config.model.path,
                           success_threshold=settings.success_threshold)
    try:
        if backend is None:
            rc = resolved.components["backend"]
            options = rc.options
            if request.model_override and "model" in type(options).model_fields:
                options = options.model_copy(update={"model": request.model_override})
            backend = rc.component.build(options, context)
            opened.append(backend)
        if checkpoint:
            from spade_core.eval.weights import load_checkpoint

            scored = str(load_checkpoint(backend, checkpoint))
        components: dict[str, Any] = {"generation_backend": backend}
        # Every suite gets the sandbox: replies are scored there unless a suite declares its
        # scorer safe in this process (docs/eval.md).
        rc = resolved.components["sandbox"]
        components["sandbox"] = rc.component.build(rc.options, context)
        opened.append(components["sandbox"])
        if FAMILY_SUITES & set(request.suites):
            components["env_family"] = [f.component.build(f.options, context)
                                        for f in resolved.families]
            opened.extend(components["env_family"])
        context = BuildContext(seed=settings.seed, model=resolved.config.model.path,
                               success_threshold=settings.success_threshold,
                               components=components, registry=registry)
        suites: list[EvalSuite] = []
        for _, component, options in chosen:
            suite = component.build(options, context)
            opened.append(suite)
            suites.append(suite)
        results = [run_suite(suite, name, backend, settings, request.limit,
                             request.save_replies)
                   for suite, name in zip(suites, request.suites)]
    finally:
        for instance in reversed(opened):
            try:
                instance.close()
            except Exception:  # noqa: BLE001 - closing must not hide the results
                pass
    return results, asdict(settings) | {"limit": request.limit, "checkpoint_folder": scored}


def check_suites(resolved: Any, chosen: list[tuple[str, Any, Any]]) -> None:
    """The chosen suites' preflight checks (a suite whose own environment is missing says which
    command makes it), run before any model is loaded: one ``ConfigError`` with every
    problem."""
    from spade_core.config.preflight import PreflightContext

    problems = [str(p) for name, component, options in chosen if component.preflight
                for p in component.preflight(options, PreflightContext(where=f"--suite {name}",
                                                                       config=resolved)) or ()]
    if problems:
        raise ConfigError("; ".join(problems))


def with_data(registry: Registry, name: str, options: dict[str, Any], data: Any) -> dict[str, Any]:
    """``options`` of the suite ``name`` with its ``data`` option set to ``data`` (its entry of
    ``eval.data``) unless the options already set one; a ``ConfigError`` when the suite's options
    have no ``data`` field (it reads no data files). The one place where ``eval.data`` reaches a
    suite, for ``spade eval``, the in-run evaluation and the contamination guard."""
    if data is None or "data" in options:
        return options
    component = registry.resolve("eval_suite", name, f"eval.data.{name}")
    if component.options is None or "data" not in component.options.model_fields:
        raise ConfigError(f"eval.data.{name}: the eval suite {name!r} reads no data location "
                          "(its options have no 'data' field); remove the entry")
    return {**options, "data": data}


def configured_options(registry: Registry, section: Any, name: str) -> dict[str, Any]:
    """The options of the suite ``name`` as the config's ``eval`` section sets them:
    ``eval.options.<name>`` and its ``eval.data`` entry."""
    return with_data(registry, name, dict(section.options.get(name, {})), section.data.get(name))


def resolve_suite(registry: Registry, name: str, options: dict[str, Any],
                  data: Any = None) -> tuple[Any, Any]:
    """The registered suite ``name`` and its validated options (``data``: its ``eval.data``
    entry, see :func:`with_data`); a ``ConfigError`` saying what is wrong (an unknown name with
    the installed ones, a missing or misspelled option)."""
    where = f"--suite {name}"
    component = registry.resolve("eval_suite", name, where)
    options = with_data(registry, name, options, data)
    if component.options is None:
        return component, options
    try:
        validated = component.options.model_validate(options)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']}"
                             for e in exc.errors())
        raise ConfigError(f"{where}: invalid options ({problems}); set them with --option "
                          f"{name}.KEY=VALUE or eval.options.{name} in the config") from None
    check_backend_selections(registry, name, validated)
    return component, validated


def check_backend_selections(registry: Registry, name: str, options: Any) -> None:
    """Suite options that select a generation backend (``user_backend`` of tau2 and acebench)
    name a registered backend with valid options: checked here, before any model is loaded."""
    from spade_core.config.schema import Selection

    for field_name in type(options).model_fields:
        selection = getattr(options, field_name)
        if not isinstance(selection, Selection):
            continue
        where = f"eval.options.{name}.{field_name}"
        component = registry.resolve("generation_backend", selection.plugin, where)
        if component.options is not None:
            try:
                component.options.model_validate(selection.options)
            except ValidationError as exc:
                raise ConfigError(f"{where}: invalid options for backend "
                                  f"{selection.plugin!r}: {exc}") from None
