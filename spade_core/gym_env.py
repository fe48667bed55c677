"""Gymnasium compatibility: any environment running in a sandbox session as a ``gymnasium.Env``
with text observation and action spaces (what :func:`spade_core.api.open_env` returns), and
registration of one program for ``gymnasium.make`` (a run's memory: :mod:`spade_core.gym_registry`).

The environment program keeps running in its sandbox; this wrapper only forwards ``reset`` and
``step``. Seeding follows Gymnasium: ``reset(seed=s)`` reseeds ``np_random``, and a ``reset()``
without a seed draws the program's seed from it, so seeded sequences of resets are reproducible.
"""

from __future__ import annotations

import copy
import string
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from spade_core.interfaces.sandbox import SandboxSession

#: Characters random samples are drawn from (membership accepts any text; see UnicodeText).
SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " \n"


class UnicodeText(spaces.Text):
    """A :class:`gymnasium.spaces.Text` whose members are all strings within the length bounds,
    whatever their characters: observations and actions are natural language and code, so a
    closed alphabet would reject valid ones. ``sample()`` draws from :data:`SAMPLE_CHARSET`."""

    def __init__(self, max_length: int, *, min_length: int = 0,
                 seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object, /) -> bool:
        return (isinstance(other, UnicodeText) and self.min_length == other.min_length
                and self.max_length == other.max_length)


class SandboxTextEnv(gymnasium.Env):
    """A program's environment as a ``gymnasium.Env``.

    ``session_factory`` opens a fresh :class:`SandboxSession` (``lambda: sandbox.open(source,
    family=family)``); it is called lazily on the first ``reset`` so that constructing the env
    (as ``gymnasium.make`` does) costs nothing. Observations longer than
    ``max_observation_chars`` are cut with a marker; ``info["tools"]`` carries tool schemas.
    ``on_close`` is called once after the env's session is closed (:func:`~spade_core.api.open_env`
    stops the env's own sandbox with it); closing twice is harmless.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # as gymnasium's toy-text envs

    def __init__(self, session_factory: Callable[[], SandboxSession], *,
                 max_observation_chars: int = 65536, max_action_chars: int = 16384,
                 render_mode: str | None = None,
                 on_close: Callable[[], None] | None = None) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or "
                             f"None, got {render_mode!r}")
        self._session_factory = session_factory
        self._on_close = on_close
        self._session: SandboxSession | None = None
        self.observation_space = UnicodeText(max_observation_chars)
        self.action_space = UnicodeText(max_action_chars)
        self.render_mode = render_mode
        self._last_observation = ""

    def _open(self) -> SandboxSession:
        if self._session is None:
            self._session = self._session_factory()
        return self._session

    def _clip(self, observation: str) -> str:
        limit = self.observation_space.max_length
        if len(observation) <= limit:
            return observation
        marker = "\n[... observation cut ...]"
        return observation[:limit - len(marker)] + marker

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        program_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        observation, info = self._open().reset(program_seed)
        self._last_observation = self._clip(str(observation))
        info = copy.deepcopy(dict(info))
        info.setdefault("seed", program_seed)
        return self._last_observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._session is None:
            raise RuntimeError("call reset() before step()")
        if not isinstance(action, str):
            raise TypeError(f"actions are text, got {type(action).__name__}")
        result = self._session.step(action[: self.action_space.max_length])
        self._last_observation = self._clip(str(result.observation))
        return (self._last_observation, float(result.reward), bool(result.terminated),
                bool(result.truncated), copy.deepcopy(dict(result.info)))

    def render(self) -> str | None:
        return self._last_observation if self.render_mode == "ansi" else None

    def close(self) -> None:
        try:
            session, self._session = self._session, None
            if session is not None:
                session.close()
            super().close()
        finally:
            on_close, self._on_close = self._on_close, None
            if on_close is not None:
                on_close()


def make_env(source: str, *, sandbox: Any, family: Any = None, **kwargs: Any) -> SandboxTextEnv:
    """A :class:`SandboxTextEnv` running ``source`` in ``sandbox`` (any component with
    ``open(program, family=...)``)."""
    return SandboxTextEnv(lambda: sandbox.open(source, family=family), **kwargs)


def register_program(env_id: str, source: str, *, sandbox_factory: Callable[[], Any],
                     family: Any = None, max_episode_steps: int | None = None,
                     **kwargs: Any) -> None:
    """Register ``source`` under ``env_id`` so that ``gymnasium.make(env_id)`` returns it running
    inside a sandbox from ``sandbox_factory`` (called once per ``make``; closing the env closes
    its session only). Registering an id again replaces it."""

    def entry_point(**make_kwargs: Any) -> SandboxTextEnv:
        sandbox = sandbox_factory()
        return SandboxTextEnv(lambda: sandbox.open(source, family=family),
                              **{**kwargs, **make_kwargs})

    gymnasium.registry.pop(env_id, None)
    gymnasium.register(id=env_id, entry_point=entry_point, max_episode_steps=max_episode_steps,
                       nondeterministic=False, disable_env_checker=True)
