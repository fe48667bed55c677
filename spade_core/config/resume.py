"""Which config changes a resumed run allows: ``spade run --resume`` and ``spade_core.run(...,
resume=...)`` both refuse a config that differs from the run's stored one in anything else."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spade_core.config.load import ResolvedConfig
    from spade_core.plugins import LoadedPlugins

#: Keys that may differ between a run's stored config and the config it is resumed with.
RESUMABLE_CHANGES = ("run.dir", "run.iterations", "logging")


def _flatten(data: object, prefix: str = "") -> dict[str, object]:
    if isinstance(data, dict):
        out: dict[str, object] = {}
        for key, value in data.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): data}


def config_differences(stored: dict, current: dict) -> list[str]:
    """Keys whose values differ between two resolved configs, apart from those a resume may
    change."""
    a, b = _flatten(stored), _flatten(current)
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return [k for k in changed
            if not any(k == p or k.startswith(p + ".") for p in RESUMABLE_CHANGES)]


def check_resumable(resume: Path, resolved: "ResolvedConfig", loaded: "LoadedPlugins") -> None:
    """Refuse (ConfigError) to resume the run in ``resume`` with a config that differs from the
    one it stored in anything but :data:`RESUMABLE_CHANGES`."""
    from spade_core.config.load import resolve_config
    from spade_core.config.yaml_safe import load_yaml_text
    from spade_core.errors import ConfigError

    stored_path = resume / "config.resolved.yaml"
    if not stored_path.is_file():
        raise ConfigError(f"run --resume {resume}: no config.resolved.yaml there; give the "
                          "directory a `spade run` wrote")
    stored = load_yaml_text(stored_path.read_bytes(), str(stored_path))
    try:  # written by an older version: compare it under today's option names
        stored = resolve_config(stored, loaded.registry, str(stored_path)).to_dict()
    except ConfigError:
        pass  # compared as written; the differences name what changed
    differing = config_differences(stored, resolved.to_dict())
    if differing:
        raise ConfigError(
            f"run --resume {resume}: the config differs from the run's "
            f"({', '.join(differing[:8])}{' ...' if len(differing) > 8 else ''}); only "
            f"{', '.join(RESUMABLE_CHANGES)} may change on resume")
