"""The ``transformers`` generation backend: batched chat generation in this process, CPU or GPU.

Prompts are rendered with the model's chat template (or a tool-aware one when ``tools`` are given),
sorted by length and generated in left-padded batches of at most ``batch_size``. Each completion
carries its prompt and completion token ids and the log-probability of every completion token under
the distribution it was drawn from (logits / temperature, before top-k/top-p: the quantity TRL's
GRPO recomputes), so the trainer can use them directly.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GenerationConfig,
    LogitsProcessor,
)

from plugins.backends.chat_format import ChatFormatter
from plugins.backends.generation_errors import GenerationError, ModelSourceError
from plugins.backends.sampling import call_sampling
from spade_core.interfaces.backend import Generation, TrainableBackend, TrainablePolicy

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class _LogprobRecorder(LogitsProcessor):
    """Records log p(token) of each sampled token while ``generate`` runs, in O(batch x vocab)
    memory: at step t+1 it reads the token chosen at step t from ``input_ids``."""

    def __init__(self, temperature: float) -> None:
        self.temperature = temperature if temperature > 0 else 1.0
        self.previous: torch.Tensor | None = None
        self.steps: list[torch.Tensor] = []

    def _take(self, chosen: torch.Tensor) -> None:
        assert self.previous is not None
        self.steps.append(self.previous.gather(1, chosen[:, None]).squeeze(1))

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.previous is not None:
            self._take(input_ids[:, -1])
        self.previous = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        return scores

    def finish(self, completions: torch.Tensor) -> torch.Tensor:
        """Log-probs as a (batch, steps) tensor, once generation has returned ``completions``."""
        if self.previous is not None and len(self.steps) < completions.shape[1]:
            self._take(completions[:, len(self.steps)])
        self.previous = None
        if not self.steps:
            return torch.zeros((completions.shape[0], 0))
        return torch.stack(self.steps, dim=1).cpu()


def resolve_device(device: str) -> torch.device:
    """``auto`` means this process's CUDA device when there is one (``LOCAL_RANK`` under a
    multi-process launch, else the first), otherwise the CPU."""
    if device == "auto":
        if not torch.cuda.is_available():
            return torch.device("cpu")
        from spade_core.distributed import launch_info

        return torch.device(f"cuda:{launch_info().local_rank}")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """``auto`` means float32 on CPU and bfloat16 on GPU."""
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return _DTYPES[dtype]


class TransformersBackend(TrainableBackend):
    """Chat generation with a Hugging Face causal LM held in this process; safe to call from
    several threads (calls run one at a time).

    ``model``, ``tokenizer`` and ``formatter`` are public so that a colocated trainer can train the
    very module that generates (generation then always uses the current weights).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        chat_template: str | None = None,
        tool_chat_template: str = "auto",
        top_p: float = 1.0,
        top_k: int = 0,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        attn_implementation: str | None = None,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.batch_size = batch_size
        self.top_p = top_p
        self.top_k = top_k
        extra: dict[str, Any] = {}
        if attn_implementation:
            extra["attn_implementation"] = attn_implementation
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
            self.model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=self.dtype, **extra)
        except (OSError, ValueError) as exc:
            raise ModelSourceError(f"could not load a causal language model from {self.model_dir}: "
                                   f"{exc}") from exc
        self.model.to(self.device)
        self.model.eval()
        self.formatter = ChatFormatter(self.tokenizer, chat_template, tool_chat_template,
                                       chat_template_kwargs)
        self.stop_ids = self.formatter.stop_token_ids(self.model.generation_config.eos_token_id)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else self.stop_ids[0]
        # One generate() at a time: the seeded RNG fork and the eval/train toggle are process-wide.
        self._lock = threading.Lock()

    # -- generation ------------------------------------------------------------------------------

    def generate(
        self,
        conversations: Sequence[list[dict[str, Any]]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None = None,
        tools: list[dict[str, Any]] | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> list[Generation]:
        """One completion per conversation, in order. ``temperature=0`` is greedy decoding; a
        ``seed`` makes sampling reproducible without disturbing the global RNG."""
        top_p, top_k = call_sampling(max_new_tokens, top_p, top_k, self.top_p, self.top_k)
        if temperature < 0:
            raise GenerationError(f"temperature must be >= 0, got {temperature}")
        if not conversations:
            return []
        prompts = [self.formatter.encode(_checked(conv, i), tools, chat_template_kwargs)
                   for i, conv in enumerate(conversations)]
        # Longest first: rows of similar length share a batch, so little compute goes to padding.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]), reverse=True)
        results: list[Generation | None] = [None] * len(prompts)
        with self._lock, self._rng(seed), torch.inference_mode(), self._eval_mode():
            for start in range(0, len(order), self.batch_size):
                rows = order[start:start + self.batch_size]
                batch = self._generate_batch([prompts[i] for i in rows], max_new_tokens,
                                             temperature, top_p, top_k)
                for row, generation in zip(rows, batch):
                    results[row] = generation
        return [g for g in results if g is not None]

    def _generate_batch(self, prompts: list[list[int]], max_new_tokens: int, temperature: float,
                        top_p: float, top_k: int) -> list[Generation]:
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):  # left padding: every prompt ends at the same column
            input_ids[row, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            attention[row, width - len(ids):] = 1
        sampling = temperature > 0
        config = GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=sampling,
            temperature=temperature if sampling else None,
            top_p=top_p if sampling else None,
            top_k=top_k if sampling else None,
            pad_token_id=self.pad_id,
            eos_token_id=self.stop_ids,
            bos_token_id=self.model.generation_config.bos_token_id,
            return_dict_in_generate=True,
        )
        recorder = _LogprobRecorder(temperature)
        output = self.model.generate(
            input_ids=input_ids.to(self.device), attention_mask=attention.to(self.device),
            generation_config=config, logits_processor=[recorder])
        completions = output.sequences[:, width:].cpu()
        logprobs = recorder.finish(completions)
        generations = []
        for row, ids in enumerate(prompts):
            tokens = completions[row].tolist()
            stop_at = next((i for i, t in enumerate(tokens) if t in self.stop_ids), None)
            keep = len(tokens) if stop_at is None else stop_at + 1
            generations.append(Generation(
                text=self.tokenizer.decode(tokens[:keep], skip_special_tokens=True),
                prompt_ids=list(ids),
                completion_ids=tokens[:keep],
                logprobs=[float(x) for x in logprobs[row, :keep]],
                finish_reason="length" if stop_at is None else "stop",
            ))
        return generations

    @contextlib.contextmanager
    def _rng(self, seed: int | None) -> Iterator[None]:
        if seed is None:
            yield
            return
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            yield

    @contextlib.contextmanager
    def _eval_mode(self) -> Iterator[None]:
        was_training = self.model.training
        self.model.eval()
        try:
            yield
        finally:
            if was_training:
                self.model.train()

    def policy(self) -> TrainablePolicy:
        """The module this backend generates with, trained in place."""
        return TrainablePolicy(tokenizer=self.tokenizer, chat_template=self.formatter.template,
                               stop_ids=list(self.stop_ids), module=self.model,
                               chat_template_kwargs=dict(self.formatter.template_kwargs))

    def close(self) -> None:
        """Release the model's memory."""
        self.model = None  # type: ignore[assignment]
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def _checked(conversation: Any, index: int) -> list[dict[str, Any]]:
    if not isinstance(conversation, list) or not conversation:
        raise GenerationError(f"conversation {index} must be a non-empty list of messages, got "
                              f"{type(conversation).__name__}")
    for j, message in enumerate(conversation):
        if not isinstance(message, dict) or "role" not in message:
            raise GenerationError(f"conversation {index}, message {j}: expected a dict with 'role' "
                                  f"and 'content', got {message!r:.80}")
    return conversation
