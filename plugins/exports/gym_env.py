"""The ``gymnasium.Env`` that :func:`spade_core.api.open_env` returns: the families' sandboxed text
env (:class:`plugins.families.gym.SandboxTextEnv`) that also owns the sandbox it was opened in, so
that ``env.close()`` stops the sandbox's workers too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plugins.families.gym import SandboxTextEnv
from spade_core.interfaces.sandbox import SandboxSession


class OwnedSandboxTextEnv(SandboxTextEnv):
    """A :class:`SandboxTextEnv` that calls ``on_close`` (stop its own sandbox) after closing its
    session; closing twice is harmless."""

    def __init__(self, open_session: Callable[[], SandboxSession],
                 on_close: Callable[[], None], **options: Any) -> None:
        super().__init__(open_session, **options)
        self._on_close: Callable[[], None] | None = on_close

    def close(self) -> None:
        try:
            super().close()
        finally:
            on_close, self._on_close = self._on_close, None
            if on_close is not None:
                on_close()
