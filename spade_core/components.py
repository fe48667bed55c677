"""Component kinds, the records plugins register, and the registry that resolves config names."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from spade_core.errors import ConfigError


@dataclass(frozen=True)
class KindInfo:
    """One component kind: its registration hook and the config section (or, for kinds no config
    selects, the command-line option) that selects it."""

    kind: str
    hook: str
    section: str
    label: str


#: Every component kind, in the order the loop uses them.
KINDS: tuple[KindInfo, ...] = (
    KindInfo("corpus_sampler", "register_corpus_samplers", "corpus", "corpus sampler"),
    KindInfo("prompt_strategy", "register_prompt_strategies", "designer", "prompt strategy"),
    KindInfo("env_family", "register_env_families", "families", "env family"),
    KindInfo("sandbox", "register_sandboxes", "sandbox", "sandbox"),
    KindInfo("difficulty_estimator", "register_difficulty_estimators", "estimator",
             "difficulty estimator"),
    KindInfo("env_memory", "register_env_memories", "memory", "env memory"),
    KindInfo("generation_backend", "register_generation_backends", "backend",
             "generation backend"),
    KindInfo("trainer", "register_trainers", "trainer", "trainer"),
    KindInfo("eval_suite", "register_eval_suites", "eval", "eval suite"),
    KindInfo("export_format", "register_export_formats", "envs export --format",
             "export format"),
)
KIND_BY_NAME: dict[str, KindInfo] = {k.kind: k for k in KINDS}


@dataclass(frozen=True)
class BuildContext:
    """What a component factory may need besides its options."""

    run_dir: Path | None = None
    seed: int = 0
    #: The run's model spec (``config.model.path``), for backends and trainers.
    model: str | None = None
    #: Components the factory may depend on, by kind (e.g. the backend for a trainer). In a run
    #: it is a live read-only view: one built later (the backend, for the estimator, which is
    #: built first) appears in it too, so a component that needs it looks it up when first used.
    components: Mapping[str, Any] = field(default_factory=dict)
    #: Episode reward that counts as success (``loop.success_threshold``): estimators' win rate,
    #: the memory's mastery rule and the report all read this one number.
    success_threshold: float = 1.0
    #: This process's rank and the number of processes in a multi-process launch
    #: (``spade_core.distributed``). A backend built on a rank other than 0 is never asked to
    #: generate: the trainer only needs its ``policy()`` (tokenizer, chat template, module).
    rank: int = 0
    world_size: int = 1
    #: The registry the component comes from, for a factory that builds components its own
    #: options select (the tau2 eval suite's ``user_backend``); ``None`` where not given.
    registry: Registry | None = None


Factory = Callable[[Any, BuildContext], Any]
#: ``check(options, preflight) -> problems``: checks of a component's validated options against
#: this machine that need no heavy import (files exist, optional packages are installed, settings
#: agree); ``preflight`` is a :class:`spade_core.config.preflight.PreflightContext` (``context``
#: is only ever the :class:`BuildContext`); each problem starts with the config key at fault.
#: See docs/plugins.md ("Preflight checks").
Preflight = Callable[[Any, Any], list[str]]


def built_by(module: str, function: str = "build") -> Callable[[Any, BuildContext], Any]:
    """A component factory that imports ``module`` only when the component is built and calls
    its ``function(options, context)``: plugins stay light at import (``spade --help``)."""
    import importlib

    def factory(options: Any, context: BuildContext) -> Any:
        return getattr(importlib.import_module(module), function)(options, context)

    factory.__qualname__ = f"built_by({module}.{function})"
    return factory


class Register(Protocol):
    """The callback a registration hook receives."""

    def __call__(
        self, name: str, factory: Factory, options: type | None = None, summary: str = "",
        *, preflight: Preflight | None = None,
    ) -> None: ...


@dataclass(frozen=True)
class Component:
    """One registered component: a named factory of a kind, from a plugin of a distribution."""

    kind: str
    name: str
    factory: Factory
    options: type | None
    summary: str
    plugin: str
    distribution: str
    version: str
    #: Optional checks run by ``spade config check`` and before ``spade run`` builds anything.
    preflight: Preflight | None = None

    def build(self, options: Any, context: BuildContext) -> Any:
        """Call the factory and make sure the result subclasses the kind's base class; any
        exception is re-raised naming the component. A ``ConfigError``
        (the user's settings cannot work, e.g. an optional library is missing) stays one, so the
        command exits with status 2 like any other config error; anything else is the plugin's
        failure (``PluginError``)."""
        from spade_core.errors import ConfigError, PluginError
        from spade_core.interfaces import BASES

        try:
            built = self.factory(options, context)
        except Exception as exc:  # noqa: BLE001 - any plugin failure is reported, not crashed on
            label = KIND_BY_NAME[self.kind].label
            if isinstance(exc, ConfigError):
                raise ConfigError(f"{label} {self.name!r} (plugin {self.plugin!r}): {exc}") from exc
            raise PluginError(
                f"{label} {self.name!r} (plugin {self.plugin!r} from {self.distribution} "
                f"{self.version}) failed to start: {type(exc).__name__}: {exc}"
            ) from exc
        base = BASES[self.kind]
        if not isinstance(built, base):
            raise PluginError(f"{KIND_BY_NAME[self.kind].label} {self.name!r} (plugin "
                              f"{self.plugin!r} from {self.distribution} {self.version}): its "
                              f"factory returned a {type(built).__name__}, which does not "
                              f"subclass spade_core.interfaces.{base.__name__} (every component "
                              "subclasses its kind's base class, docs/plugins.md)")
        self._check_signatures(built, base)
        return built

    def _check_signatures(self, built: Any, base: type) -> None:
        """Refuse a component whose methods cannot take the calls its interface declares (one
        written for an earlier interface), before the loop calls it: the message names the
        package, the component, what changed and where the plugin guide has the current form."""
        from spade_core.errors import PluginError
        from spade_core.interfaces.members import signature_problems

        problems = signature_problems(base, type(built))
        if not problems:
            return
        info = KIND_BY_NAME[self.kind]
        changes = getattr(base, "_interface_changes", {})
        notes = list(dict.fromkeys(changes[m] for m, _ in problems if m in changes))
        guide = getattr(base, "_guide", "")
        raise PluginError(
            f"{info.label} {self.name!r} (plugin {self.plugin!r} from package "
            f"{self.distribution} {self.version}) does not fit the current "
            f"spade_core.interfaces.{base.__name__} interface: "
            + "; ".join(why for _, why in problems)
            + (". The interface changed: " + "; ".join(notes) if notes else "")
            + f". Update {self.distribution} to the current form, described in docs/plugins.md, "
            f"\"{info.hook}(register)\"" + (f", and {guide}" if guide else "") + ".")


@dataclass
class Registry:
    """All components by kind and name, with duplicate names recorded as conflicts."""

    components: dict[tuple[str, str], Component] = field(default_factory=dict)
    conflicts: dict[tuple[str, str], list[Component]] = field(default_factory=dict)

    def add(self, component: Component) -> str | None:
        """Add a component; returns an error message when the name is already taken."""
        key = (component.kind, component.name)
        existing = self.components.get(key)
        if existing is None and key not in self.conflicts:
            self.components[key] = component
            return None
        clash = self.conflicts.setdefault(key, [existing] if existing else [])
        clash.append(component)
        self.components.pop(key, None)
        owners = " and ".join(f"{c.distribution} (plugin {c.plugin!r})" for c in clash)
        return (
            f"duplicate {KIND_BY_NAME[component.kind].label} name {component.name!r}: "
            f"registered by {owners}; uninstall one or limit loading with SPADE_PLUGINS"
        )

    def build(self, kind: str, name: str, options: dict[str, Any], where: str,
              context: BuildContext | None = None) -> Any:
        """Resolve ``name``, validate ``options`` against its schema and build it (for commands
        that build one component from command-line flags rather than a config)."""
        component = self.resolve(kind, name, where)
        validated: Any = options
        if component.options is not None:
            try:
                validated = component.options.model_validate(options)
            except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError, for the user
                raise ConfigError(f"{where}: invalid options for {name!r}: {exc}") from None
        return component.build(validated, context or BuildContext())

    def names(self, kind: str) -> list[str]:
        return sorted(n for (k, n) in self.components if k == kind)

    def resolve(self, kind: str, name: str, where: str) -> Component:
        """The component ``name`` of ``kind``, or a :class:`ConfigError` naming what is allowed."""
        key = (kind, name)
        if key in self.components:
            return self.components[key]
        label = KIND_BY_NAME[kind].label
        if key in self.conflicts:
            owners = " and ".join(c.distribution for c in self.conflicts[key])
            raise ConfigError(
                f"{where}: {label} {name!r} is registered by more than one distribution "
                f"({owners}); uninstall one or limit loading with SPADE_PLUGINS."
            )
        installed = self.names(kind)
        message = f"{where}: unknown {label} {name!r}. Installed: {', '.join(installed) or 'none'}."
        close = difflib.get_close_matches(name, installed, n=1, cutoff=0.6)
        if close:
            message += f" Did you mean {close[0]!r}?"
        raise ConfigError(message)
