"""Preflight: check a validated config against this machine before anything heavy starts.

The schema passes (``load.py``) say whether a config is well formed; preflight says whether it can
run here: the model and corpus paths exist, the optional packages the selected plugins need are
installed, settings that must agree do. Nothing is loaded or downloaded: a check looks at files
and finds packages with ``importlib.util.find_spec``.

The core knows no check itself. A component contributes one at registration
(``register(name, factory, options, summary, preflight=check)``, called as
``check(options, preflight)`` with a :class:`PreflightContext`, returning problems), and a plugin
checks config sections that are not components through the ``spade_preflight`` hook. Every
problem starts with the config key at fault. ``spade config check`` and ``spade run`` both run it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spade_core.errors import ConfigError

if TYPE_CHECKING:
    from spade_core.config.load import ResolvedComponent, ResolvedConfig
    from spade_core.plugins import LoadedPlugins


@dataclass(frozen=True)
class PreflightContext:
    """What a component's preflight check may read besides its own options."""

    #: Key path of the component's options, e.g. ``trainer.options`` or ``families.0.options``;
    #: problems start with it (``f"{preflight.where}.path: ..."``).
    where: str
    #: The whole resolved config (``config.config.model.path``, ``config.config.loop``, ...).
    config: "ResolvedConfig"

    @property
    def model(self) -> str:
        """The run's model spec (``model.path``)."""
        return self.config.config.model.path


def _component_problems(rc: "ResolvedComponent", config: "ResolvedConfig") -> list[str]:
    check = rc.component.preflight
    if check is None:
        return []
    preflight_context = PreflightContext(where=f"{rc.section}.options", config=config)
    try:
        found = check(rc.options, preflight_context)
    except Exception as exc:  # noqa: BLE001 - a broken check is reported, never crashes the CLI
        return [f"{rc.section}: the preflight check of {rc.component.name!r} (plugin "
                f"{rc.component.plugin!r}) failed: {type(exc).__name__}: {exc}"]
    return [str(p) for p in found or ()]


def preflight_problems(config: "ResolvedConfig",
                       plugins: "LoadedPlugins | None" = None) -> list[str]:
    """Every problem the selected components' checks and the ``spade_preflight`` hooks find."""
    problems: list[str] = []
    for rc in [*config.components.values(), *config.families]:
        problems += _component_problems(rc, config)
    if plugins is not None:
        found: list[str] = []

        def report(key: str, message: str) -> None:
            found.append(f"{key}: {message}")

        for impl in plugins.manager.hook.spade_preflight.get_hookimpls():
            try:
                impl.function(config=config, report=report)
            except Exception as exc:  # noqa: BLE001 - as above: say which plugin, carry on
                found.append(f"(plugin {impl.plugin_name!r}): its spade_preflight hook failed: "
                             f"{type(exc).__name__}: {exc}")
        problems += found
    return problems


def preflight(config: "ResolvedConfig", plugins: "LoadedPlugins | None" = None) -> None:
    """Raise one :class:`ConfigError` listing every preflight problem (exit status 2)."""
    problems = [p.rstrip(".") for p in preflight_problems(config, plugins)]
    if not problems:
        return
    if len(problems) == 1:
        raise ConfigError(f"{config.source}: {problems[0]}.")
    raise ConfigError(f"{config.source}: {len(problems)} problems: {'; '.join(problems)}.")


def missing_package(module: str, extra: str, key: str, what: str) -> str | None:
    """The problem to report when ``module`` cannot be found (``None`` when it can), naming the
    ``spade-rl`` extra that installs it: a helper for plugins' checks."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return None
    return (f"{key}: {what} needs the {module} package, which is not installed; install it with "
            f"pip install 'spade-rl[{extra}]'")


#: The signature of a component's check, for plugin authors' type hints.
ComponentCheck = Callable[[Any, PreflightContext], list[str]]
