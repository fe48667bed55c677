"""Register the environments of a run's memory with gymnasium, so that
``gymnasium.make("spade/<family>-<id>-v0")`` returns one running inside the sandbox (the env is
:class:`spade_core.gym_env.SandboxTextEnv`). Light at import: gymnasium loads on registration."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: Statuses of records worth playing: being learned, or already mastered.
PLAYABLE_STATUSES: tuple[str, ...] = ("frontier", "mastered")


def env_id(record: Any, namespace: str = "spade") -> str:
    """The gymnasium id of a memory record: ``<namespace>/<family>-<id>-v0``."""
    return f"{namespace}/{record.family}-{record.id}-v0"


def register_records(records: Iterable[Any], *, families: Mapping[str, Any],
                     sandbox_factory: Callable[[], Any], namespace: str = "spade",
                     statuses: Sequence[str] = PLAYABLE_STATUSES,
                     max_episode_steps: int | None = None) -> list[str]:
    """Register every record (an ``EnvRecord``) whose status is in ``statuses`` and whose family
    is in ``families``; returns the registered ids in order."""
    from spade_core.gym_env import register_program

    registered = []
    for record in records:
        if record.status not in statuses or record.family not in families:
            continue
        name = env_id(record, namespace)
        register_program(name, record.source, sandbox_factory=sandbox_factory,
                         family=families[record.family], max_episode_steps=max_episode_steps)
        registered.append(name)
    return registered


class SharedSandbox:
    """Builds the named sandbox plugin on first use and hands the same one to every env."""

    def __init__(self, name: str = "process", options: dict[str, Any] | None = None) -> None:
        self.name, self.options, self._sandbox = name, options or {}, None

    def __call__(self) -> Any:
        if self._sandbox is None:
            from spade_core.plugins import load_plugins

            self._sandbox = load_plugins().registry.build("sandbox", self.name, self.options,
                                                          "sandbox")
        return self._sandbox

    def close(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.close()


def register_run_memory(run_dir: str | Path, *, memory: str | None = None,
                        memory_options: Mapping[str, Any] | None = None,
                        sandbox_factory: Callable[[], Any] | None = None,
                        families: Mapping[str, Any] | None = None, namespace: str = "spade",
                        statuses: Sequence[str] = PLAYABLE_STATUSES) -> list[str]:
    """Register the playable environments stored in the memory of ``run_dir``.

    The memory is the component the run's ``config.resolved.yaml`` names, opened read-only (safe
    while the run writes) and read through ``EnvMemory.records()``; a directory without a config
    (filled by ``spade envs import``) holds the ``faiss`` memory with default options, and
    ``memory``/``memory_options`` name another (as ``spade envs import --memory`` did). Without
    ``sandbox_factory`` one shared ``process`` sandbox is built on the first ``gymnasium.make``."""
    from spade_core.program_files import installed_families
    from spade_core.run_memory import open_run_memory

    opened = open_run_memory(run_dir, memory=memory, options=memory_options)
    try:
        records = list(opened.records())
    finally:
        opened.close()
    return register_records(records, families=families or installed_families(),
                            sandbox_factory=sandbox_factory or SharedSandbox(),
                            namespace=namespace, statuses=statuses)
