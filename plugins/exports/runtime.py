"""Play an exported environment through this project's sandbox: what the verifiers and OpenEnv
exports call at run time, so that an exported program never runs outside the ``process``
sandbox (bubblewrap) however the consuming library drives it."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from spade_core.gym_registry import SharedSandbox
from spade_core.program_files import installed_families

_SANDBOXES: dict[str, SharedSandbox] = {}

#: The installed families, built once per process (every episode needs its family).
families = cache(installed_families)


def shared_sandbox(name: str = "process") -> SharedSandbox:
    """One sandbox per process and sandbox name, built on first use."""
    if name not in _SANDBOXES:
        _SANDBOXES[name] = SharedSandbox(name)
    return _SANDBOXES[name]


class SandboxedEpisode:
    """One episode of an exported row (``source`` and ``family``) in a sandbox session.

    ``reset(seed)`` returns the agent's first observation (the family's agent instructions are
    in :attr:`instructions`); ``step(action)`` returns ``(observation, reward, done, info)``."""

    def __init__(self, row: Mapping[str, Any], *, sandbox: str = "process") -> None:
        installed = families()
        if row["family"] not in installed:
            from spade_core.errors import ConfigError

            raise ConfigError(f"exported environment {row['id']}: family {row['family']!r} is not "
                              f"installed here; installed: {', '.join(sorted(installed))}")
        self.family = installed[row["family"]]
        self.source = row["source"]
        self.sandbox = shared_sandbox(sandbox)
        self.instructions = self.family.agent_instructions()
        self._session: Any = None
        self.info: dict[str, Any] = {}

    def reset(self, seed: int | None = None) -> str:
        self.close()
        self._session = self.sandbox().open(self.source, family=self.family)
        observation, info = self._session.reset(seed)
        self.info = dict(info)
        return str(observation)

    def step(self, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        if self._session is None:
            raise RuntimeError("call reset() before step()")
        result = self._session.step(action)
        return (str(result.observation), float(result.reward),
                bool(result.terminated or result.truncated), dict(result.info))

    def solution_actions(self) -> list[str] | None:
        """The program's own solution as actions (needs a reset first)."""
        if self._session is None:
            raise RuntimeError("call reset() before solution_actions()")
        tools = self.family.tools_from_info(self.info)
        return self.family.solution_actions(self._session.solution(), tools)

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()
