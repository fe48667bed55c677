"""What a follower rank of a multi-process launch builds for a vLLM backend: the tokenizer, chat
template and stop ids the trainer encodes samples with, and no engine. Rank 0 generates and
pushes the trained weights; the other ranks only train (``spade_core.distributed``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from plugins.backends.chat_format import ChatFormatter
from plugins.backends.generation_errors import GenerationError
from plugins.backends.vllm_server import model_eos
from spade_core.interfaces.backend import Generation, TrainableBackend, TrainablePolicy


class FollowerBackend(TrainableBackend):
    """The policy's tokenizer and template on a rank that never generates."""

    def __init__(self, model_dir: str | Path, *, chat_template: str | None = None,
                 tool_chat_template: str = "auto",
                 chat_template_kwargs: Mapping[str, Any] | None = None, rank: int = 1) -> None:
        from transformers import AutoTokenizer

        self.model_dir = Path(model_dir)
        self.rank = rank
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.formatter = ChatFormatter(self.tokenizer, chat_template, tool_chat_template,
                                       chat_template_kwargs)
        self.stop_ids = self.formatter.stop_token_ids(model_eos(self.model_dir))

    def generate(self, conversations: Sequence[list[dict[str, Any]]], *, max_new_tokens: int,
                 temperature: float, seed: int | None = None,
                 tools: list[dict[str, Any]] | None = None, top_p: float | None = None,
                 top_k: int | None = None,
                 chat_template_kwargs: Mapping[str, Any] | None = None) -> list[Generation]:
        raise GenerationError(f"rank {self.rank} of a multi-process launch does not generate; "
                              "rank 0 runs the loop and its generation backend")

    def policy(self) -> TrainablePolicy:
        """No module: the trainer loads its own copy to train, as with the vLLM backends."""
        return TrainablePolicy(tokenizer=self.tokenizer, chat_template=self.formatter.template,
                               stop_ids=list(self.stop_ids), module=None,
                               chat_template_kwargs=dict(self.formatter.template_kwargs))

    def update_weights(self, named_parameters: Iterable[tuple[str, Any]]) -> None:
        """Nothing to update: only rank 0 pushes weights to the generation engine."""
