"""The Python API: what ``spade config check`` and ``spade run`` do, as functions.

Re-exported lazily by ``spade_core`` (``from spade_core import run, load_config``), so that
``import spade_core`` stays light; nothing heavy is imported before a run builds its components.
Documented in ``docs/api.md``.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spade_core.config.load import ResolvedConfig
    from spade_core.plugins import LoadedPlugins

def load_plugins() -> "LoadedPlugins":
    """Every installed plugin that ``SPADE_PLUGINS`` allows, with its components."""
    from spade_core.plugins import load_plugins as load

    return load()


def load_config(config: Any, overrides: Sequence[str] = (),
                plugins: "LoadedPlugins | None" = None) -> "ResolvedConfig":
    """Read (a YAML file's path) or take (a mapping, as the YAML holds it; or a config this
    function already resolved) a config, apply ``overrides`` (``"run.seed=3"``, as
    ``--set``), validate it and every selected plugin's options, and resolve the plugins.
    Raises :class:`spade_core.errors.ConfigError` naming every problem."""
    from spade_core.config.load import ResolvedConfig, apply_overrides, resolve_config
    from spade_core.config.load import load_config as load_file

    if isinstance(config, ResolvedConfig):
        if overrides:
            return load_config(config.to_dict(), overrides, plugins)
        return config
    registry = (plugins or load_plugins()).registry
    if isinstance(config, Mapping):
        data = copy.deepcopy(dict(config))
        apply_overrides(data, list(overrides), "<config>")
        return resolve_config(data, registry, "<config>")
    return load_file(config, registry, list(overrides))


def check(config: Any, plugins: "LoadedPlugins | None" = None) -> list[str]:
    """What stops ``config`` from running on this machine (the preflight of ``spade config
    check``): one message per problem, each starting with its config key; empty when none."""
    from spade_core.config.preflight import preflight_problems

    loaded = plugins or load_plugins()
    return preflight_problems(load_config(config, plugins=loaded), loaded)


def run(config: Any, *, overrides: Sequence[str] = (), resume: str | Path | None = None,
        plugins: "LoadedPlugins | None" = None, preflight: bool = True,
        report: Callable[[str], None] | None = None) -> Path:
    """Run self-play as ``spade run`` does and return the run directory. ``resume``: continue
    that run directory from its latest checkpoint (``config`` must then match its stored config
    except ``run.iterations``, ``run.dir`` and ``logging``). ``preflight=False`` skips the checks
    against this machine; ``report`` receives the progress lines (default: stderr)."""
    from spade_core.config.preflight import preflight as check_machine
    from spade_core.selfplay.runner import run as run_selfplay

    loaded = plugins or load_plugins()
    resolved = load_config(config, overrides, loaded)
    if resume is not None:
        from spade_core.cli.run_cmd import check_resumable

        check_resumable(Path(resume), resolved, loaded)
    if preflight:
        check_machine(resolved, loaded)
    return run_selfplay(resolved, loaded, report=report or _stderr,
                        resume=Path(resume) if resume is not None else None)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


__all__ = ["check", "load_config", "load_plugins", "run"]
