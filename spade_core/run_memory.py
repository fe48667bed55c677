"""Open the environment memory of an existing run directory, through the memory component the
run's config names (``config.resolved.yaml``), never through the memory's files.

The report and the gymnasium registry read a run's memory this way. By default the memory is
opened read-only: a memory component offers that through a boolean option ``readonly`` (the
built-in ``faiss`` memory takes no writer lock then, so a run can keep writing), and one without
it is not opened at all rather than opened for writing behind a running loop's back.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.interfaces.memory import EnvMemory

RESOLVED_CONFIG = "config.resolved.yaml"
#: The memory a run directory without a config holds (``spade envs import`` uses it by default).
DEFAULT_MEMORY = "faiss"
#: The option a memory component declares to be opened read-only.
READONLY_OPTION = "readonly"


def read_run_config(run_dir: Path) -> dict[str, Any] | None:
    """The run's resolved config as plain data, or ``None`` when the directory has none."""
    path = Path(run_dir) / RESOLVED_CONFIG
    if not path.is_file():
        return None
    from spade_core.config.yaml_safe import load_yaml_text

    data = load_yaml_text(path.read_bytes(), str(path))
    return data if isinstance(data, dict) else None


def memory_selection(config: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """``(plugin, options)`` of a config's ``memory`` section (``memory: NAME`` or ``memory:
    {plugin: NAME, options: {...}}``), or ``None`` when the config has none."""
    section = (config or {}).get("memory")
    if isinstance(section, str) and section:
        return section, {}
    if isinstance(section, Mapping) and isinstance(section.get("plugin"), str):
        options = section.get("options")
        return section["plugin"], dict(options) if isinstance(options, Mapping) else {}
    return None


def open_run_memory(run_dir: Path | str, config: Mapping[str, Any] | None = None, *,
                    memory: str | None = None, options: Mapping[str, Any] | None = None,
                    readonly: bool = True, plugins: Any = None) -> EnvMemory:
    """Build the memory component of the run in ``run_dir`` over that run's data.

    The component and its options come from ``memory``/``options`` when given, else from
    ``config`` (the run's config as a dict; read from ``run_dir`` when omitted), else
    :data:`DEFAULT_MEMORY` with default options (a directory filled by ``spade envs import``).
    ``plugins`` is a ``LoadedPlugins`` (default: every installed plugin). Read-only opening
    sets the component's ``readonly`` option and drops options this version of the component
    does not know (the run may have been written by another version). Raises ``ConfigError``
    when the component is not installed or cannot be opened read-only; the component's own
    failure (no memory there yet, say) comes as ``PluginError``.
    """
    run_dir = Path(run_dir)
    if memory is None:
        selection = memory_selection(config if config is not None else read_run_config(run_dir))
        memory, stored = selection or (DEFAULT_MEMORY, {})
        options = stored if options is None else options
    chosen = dict(options or {})
    if plugins is None:
        from spade_core.plugins import load_plugins

        plugins = load_plugins()
    where = f"{run_dir}: memory.plugin"
    component = plugins.registry.resolve("env_memory", memory, where)
    model = component.options
    is_model = isinstance(model, type) and issubclass(model, BaseModel)
    fields = model.model_fields if is_model else {}
    if readonly:
        if READONLY_OPTION not in fields:
            raise ConfigError(f"{where}: env memory {memory!r} cannot be opened read-only (its "
                              f"options have no {READONLY_OPTION!r}); it is not opened while "
                              "its run may be writing it")
        chosen = {k: v for k, v in chosen.items() if k in fields}
        chosen[READONLY_OPTION] = True
    try:
        validated = model.model_validate(chosen) if is_model else chosen
    except ValueError as exc:  # pydantic's ValidationError
        raise ConfigError(f"{run_dir}: memory.options: {exc}") from None
    return component.build(validated, BuildContext(run_dir=run_dir))
