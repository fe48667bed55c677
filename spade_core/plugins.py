"""Plugin loading: entry points of the ``spade`` group, each loaded in isolation.

A plugin that fails to import, implements a hook that does not exist, or raises while registering
is recorded with its error and left out; every other plugin keeps working. ``SPADE_PLUGINS`` (a
comma-separated list of entry-point or distribution names) limits which installed plugins load;
set it to an empty string to load none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from spade_core import hookspecs
from spade_core.components import KINDS, Component, Registry

ENTRY_POINT_GROUP = "spade"
PLUGINS_ENV = "SPADE_PLUGINS"


@dataclass
class PluginInfo:
    """One entry point: where it comes from and whether it loaded."""

    name: str
    module: str
    distribution: str
    version: str
    hooks: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class LoadedPlugins:
    """The outcome of loading: the plugin manager, every plugin's info, and the component registry."""

    manager: pluggy.PluginManager
    plugins: list[PluginInfo]
    registry: Registry
    errors: list[str] = field(default_factory=list)


def _allowed() -> set[str] | None:
    raw = os.environ.get(PLUGINS_ENV)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _distribution(ep: metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown", "unknown"
    return dist.metadata["Name"] or "unknown", dist.version or "unknown"


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    """Hook implementations on ``plugin`` that match no hook spec (a misspelled name)."""
    unknown = []
    for attr in dir(plugin):
        opts = pm.parse_hookimpl_opts(plugin, attr)
        if opts is None:
            continue
        caller = getattr(pm.hook, attr, None)
        if caller is None or not caller.has_spec():
            unknown.append(attr)
    return unknown


def _spec_names(pm: pluggy.PluginManager) -> set[str]:
    return {name for name in dir(pm.hook) if not name.startswith("_")}


def new_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def register_plugin(
    pm: pluggy.PluginManager, plugin: object, info: PluginInfo
) -> None:
    """Register one loaded plugin object, or record why it cannot be (``info.error``)."""
    unknown = _unknown_hooks(pm, plugin)
    if unknown:
        known = ", ".join(sorted(_spec_names(pm)))
        info.error = (
            f"implements unknown hook(s) {', '.join(unknown)}; known hooks: {known}"
        )
        return
    try:
        pm.register(plugin, name=info.name)
    except Exception as exc:  # noqa: BLE001 - pluggy's validation errors are the plugin's fault
        info.error = f"{type(exc).__name__}: {exc}"
        return
    info.hooks = sorted(
        caller.name for caller in (pm.get_hookcallers(plugin) or [])
    )


def collect_components(loaded: LoadedPlugins) -> None:
    """Call every registration hook, one implementation at a time, attributing each component to
    the plugin that registered it."""
    infos = {p.name: p for p in loaded.plugins}
    for kind in KINDS:
        caller = getattr(loaded.manager.hook, kind.hook)
        for impl in caller.get_hookimpls():
            info = infos.get(impl.plugin_name)
            if info is None or info.error:
                continue

            def register(
                name: str, factory: Any, options: type | None = None, summary: str = "",
                *, preflight: Any = None, _kind: str = kind.kind, _info: PluginInfo = info,
            ) -> None:
                component = Component(
                    kind=_kind, name=str(name), factory=factory, options=options,
                    summary=summary, plugin=_info.name, distribution=_info.distribution,
                    version=_info.version, preflight=preflight,
                )
                clash = loaded.registry.add(component)
                if clash:
                    loaded.errors.append(clash)

            try:
                impl.function(register=register)
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the host
                info.error = f"{kind.hook} raised {type(exc).__name__}: {exc}"


def load_plugins(entry_points: list[metadata.EntryPoint] | None = None) -> LoadedPlugins:
    """Load every allowed entry point of the ``spade`` group and collect their components."""
    pm = new_manager()
    allowed = _allowed()
    if entry_points is None:
        entry_points = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    infos: list[PluginInfo] = []
    seen: set[str] = set()
    for ep in sorted(entry_points, key=lambda e: e.name):
        dist, version = _distribution(ep)
        if allowed is not None and ep.name not in allowed and dist not in allowed:
            continue
        info = PluginInfo(name=ep.name, module=ep.value, distribution=dist, version=version)
        infos.append(info)
        if ep.name in seen:
            info.error = f"another installed distribution already uses entry-point name {ep.name!r}"
            continue
        seen.add(ep.name)
        try:
            plugin = ep.load()
        except BaseException as exc:  # noqa: BLE001 - includes SystemExit from a hostile import
            if isinstance(exc, KeyboardInterrupt):
                raise
            info.error = f"import failed: {type(exc).__name__}: {exc}"
            continue
        register_plugin(pm, plugin, info)
    loaded = LoadedPlugins(manager=pm, plugins=infos, registry=Registry())
    collect_components(loaded)
    return loaded
