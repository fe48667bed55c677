"""Generation backends: the language model behind both roles (transformers, vLLM, OpenAI API)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spade_core.untrusted_text import valid_unicode


@dataclass
class Generation:
    """One completion. Token ids and log-probabilities are filled by backends that have them (the
    trainer needs the ids; an OpenAI-compatible server may not return them).

    ``text`` is always valid Unicode: lone surrogates (which an OpenAI-compatible server can send
    as JSON escapes, and which UTF-8 cannot encode) become U+FFFD here, once for every backend,
    so no later encode (the sandbox, run files) fails on a reply."""

    text: str
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str = "stop"

    def __post_init__(self) -> None:
        if isinstance(self.text, str):
            self.text = valid_unicode(self.text)


class GenerationBackend(ABC):
    """Generates chat completions for a batch of conversations."""

    #: Prompts the backend prefers per ``generate`` call (the designer's chunk size when
    #: ``loop.design_chunk`` is unset); ``None``: no preference, send everything at once.
    batch_size: int | None = None

    @abstractmethod
    def generate(
        self,
        conversations: Sequence[list[dict[str, str]]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None = None,
        tools: list[dict[str, Any]] | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> list[Generation]:
        """One completion per conversation, in order.

        ``temperature`` 0 is greedy decoding; ``seed`` makes sampling reproducible. ``top_p``
        (nucleus sampling, 1 disables) and ``top_k`` (0 disables) override the backend's own
        setting for this call; ``None`` keeps it. ``chat_template_kwargs`` go to the chat
        template when the prompt is rendered (``{"enable_thinking": False}`` for Qwen3), over
        the backend's own; a template ignores those it does not use. A backend that cannot apply
        a setting says so in its documentation (docs/backends.md), never silently drops it.
        """

    def close(self) -> None:
        """Free the model; the default holds nothing."""


@dataclass
class TrainablePolicy:
    """What a trainer needs from a backend to update its policy."""

    #: The Hugging Face tokenizer of the policy.
    tokenizer: Any
    #: The Jinja chat template generation renders conversations with (``None``: the tokenizer's).
    chat_template: str | None
    #: Token ids that end a turn.
    stop_ids: list[int]
    #: The torch module generation runs on, when a trainer may update it in place; ``None`` when
    #: generation runs elsewhere (a separate engine) and weights go through ``update_weights``.
    module: Any | None = None
    #: Keyword arguments generation renders every prompt with (the backend's
    #: ``chat_template_kwargs``, e.g. ``{"enable_thinking": False}``); a sample's own, from its
    #: role, go over them. The trainer must render with the same to train on the same tokens.
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)


class TrainableBackend(GenerationBackend):
    """A backend whose policy a trainer may update. It either shares the module it generates with
    (trained in place) or accepts new weights after each update (a separate engine such as vLLM).
    Frozen backends (an OpenAI-compatible server) are plain :class:`GenerationBackend` and serve
    untrained roles only."""

    @abstractmethod
    def policy(self) -> TrainablePolicy:
        """The tokenizer, chat template, stop tokens and (when shared) module of the policy."""

    def update_weights(self, named_parameters: Iterable[tuple[str, Any]]) -> None:
        """Load new weights (``(name, tensor)`` pairs, Hugging Face names) into the engine. Must
        be overridden by a backend whose policy shares no module."""
        raise NotImplementedError(
            f"{type(self).__name__} shares no module and cannot load new weights")
