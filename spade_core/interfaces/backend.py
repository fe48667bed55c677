"""Generation backends: the language model behind both roles (transformers, vLLM, OpenAI API)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass
class Generation:
    """One completion. Token ids and log-probabilities are filled by backends that have them (the
    trainer needs the ids; an OpenAI-compatible server may not return them)."""

    text: str
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str = "stop"


@runtime_checkable
class GenerationBackend(Protocol):
    """Generates chat completions for a batch of conversations."""

    def generate(
        self,
        conversations: Sequence[list[dict[str, str]]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> list[Generation]:
        """One completion per conversation, in order."""
        ...

    def close(self) -> None: ...
