"""An OpenEnv ``Environment`` over exported SPADE rows; every program runs in this project's
sandbox through :class:`plugins.exports.runtime.SandboxedEpisode`. Imports ``openenv``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from plugins.exports.runtime import SandboxedEpisode


class SpadeAction(Action):
    """The agent's text for one turn (a ``\\boxed{...}`` answer or tool calls)."""

    message: str = Field(description="the agent's reply for this turn")


class SpadeObservation(Observation):
    """What the environment shows; ``reward``/``done`` come from the program's ``step``."""

    text: str = Field(default="", description="the environment's observation")
    instructions: str = Field(default="", description="the family's agent instructions")
    env_id: str = Field(default="", description="the exported environment's id")


class SpadeState(State):
    env_id: str = ""
    seed: int | None = None


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]


class SpadeEnvironment(Environment[SpadeAction, SpadeObservation, SpadeState]):
    """Plays one exported environment per episode. ``reset(seed, env_id=...|index=...)`` picks
    the environment (default: ``seed`` modulo their number) and resets it with ``seed``."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each instance has its own sandbox session

    def __init__(self, rows_path: str | Path, *, sandbox: str = "process") -> None:
        super().__init__()
        self.rows = read_rows(rows_path)
        if not self.rows:
            raise ValueError(f"{rows_path}: no exported environments")
        self.sandbox = sandbox
        self._episode: SandboxedEpisode | None = None
        self._state = SpadeState()

    def _row(self, seed: int | None, env_id: str | None, index: int | None) -> dict[str, Any]:
        if env_id is not None:
            for row in self.rows:
                if row["id"] == env_id:
                    return row
            raise ValueError(f"no exported environment with id {env_id!r}")
        if index is None:
            index = (seed or 0) % len(self.rows)
        return self.rows[index]

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              env_id: str | None = None, index: int | None = None,
              **kwargs: Any) -> SpadeObservation:
        row = self._row(seed, env_id, index)
        if self._episode is not None:
            self._episode.close()
        self._episode = SandboxedEpisode(row, sandbox=self.sandbox)
        text = self._episode.reset(seed)
        self._state = SpadeState(episode_id=episode_id or str(uuid.uuid4()), step_count=0,
                                 env_id=row["id"], seed=seed)
        return SpadeObservation(text=text, instructions=self._episode.instructions,
                                env_id=row["id"], done=False, reward=None,
                                metadata={"info": _plain(self._episode.info)})

    def step(self, action: SpadeAction, timeout_s: float | None = None,
             **kwargs: Any) -> SpadeObservation:
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        text, reward, done, info = self._episode.step(action.message)
        self._state.step_count += 1
        return SpadeObservation(text=text, env_id=self._state.env_id, done=done, reward=reward,
                                metadata={"info": _plain(info)})

    @property
    def state(self) -> SpadeState:
        return self._state

    def close(self) -> None:
        if self._episode is not None:
            self._episode.close()
            self._episode = None


def _plain(value: Any) -> Any:
    """JSON-safe copy of an info dict (OpenEnv serialises observations)."""
    return json.loads(json.dumps(value, default=str))
