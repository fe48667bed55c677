"""Options of the built-in generation backends (config section ``backend.options``), each
documented in ``docs/backends.md``. Light at import: pydantic only."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Options(BaseModel):
    """Refuses unknown keys."""

    model_config = ConfigDict(extra="forbid")


class LocalModelOptions(_Options):
    """What the backends that load a model in this process share."""

    model: str | None = Field(
        default=None,
        description="model spec (bundled:NAME, a model directory, a .gguf file or hf:ORG/NAME); "
                    "None uses the run's model.path")
    chat_template: str | None = Field(
        default=None,
        description="replace the model's chat template: builtin:NAME, trl:NAME, a .jinja file or "
                    "template text")
    tool_chat_template: str = Field(
        default="auto",
        description="template for prompts with tools when the main one ignores them; auto picks "
                    "builtin:chatml-tools for ChatML models")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="nucleus sampling; 1 disables")
    top_k: int = Field(default=0, ge=0, description="top-k sampling; 0 disables")
    chat_template_kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="variables every prompt is rendered with, e.g. {enable_thinking: false} for "
                    "Qwen3; a role's loop.*_enable_thinking goes over them")


class TransformersOptions(LocalModelOptions):
    device: str = Field(default="auto", description="auto (CUDA if available, else cpu), cpu, "
                                                    "cuda or cuda:N")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto", description="auto: float32 on CPU, bfloat16 on GPU")
    batch_size: int = Field(default=8, ge=1, description="most sequences per forward pass")
    torch_threads: int | None = Field(
        default=None, ge=1,
        description="torch.set_num_threads at start; None leaves it to OMP_NUM_THREADS")
    attn_implementation: str | None = Field(
        default=None, description="transformers attention implementation (eager, sdpa, ...)")


class VLLMOptions(LocalModelOptions):
    dtype: str = Field(default="auto", description="vLLM dtype: auto, bfloat16, float16, float32")
    gpu_memory_utilization: float = Field(
        default=0.5, gt=0.0, le=1.0,
        description="share of GPU memory vLLM may take (leave room for training when colocated); "
                    "on the CPU build: share of the machine's RAM, KV cache sized from it unless "
                    "kv_cache_memory_bytes is set")
    kv_cache_memory_bytes: int | None = Field(
        default=None, ge=1,
        description="KV cache size in bytes (vLLM >= 0.11); overrides the sizing from "
                    "gpu_memory_utilization; the CPU tests use 256 MiB")
    tensor_parallel_size: int = Field(default=1, ge=1)
    max_model_len: int | None = Field(default=None, ge=16,
                                      description="context length; None uses the model's")
    enforce_eager: bool = Field(default=False,
                                description="skip graph capture and compilation (faster start)")
    enable_prefix_caching: bool = True


class VLLMServerOptions(VLLMOptions):
    url: str | None = Field(
        default=None, description="root URL of a running vLLM server (started with "
                                  "VLLM_SERVER_DEV_MODE=1 and the worker extension); a trailing "
                                  "/v1 is ignored")
    launch: bool = Field(default=False, description="start the server as a subprocess, stop it "
                                                    "on close; give exactly one of url and launch")
    served_model_name: str | None = Field(
        default=None, description="model name on the server; None: the model folder's name when "
                                  "launched, else the first GET /v1/models lists")
    host: str = Field(default="127.0.0.1", description="address a launched server listens on")
    port: int = Field(default=0, ge=0, le=65535, description="port of a launched server; 0 picks "
                                                             "a free one")
    startup_timeout_s: float = Field(default=300.0, gt=0.0,
                                     description="wait this long for GET /health to answer")
    request_timeout_s: float = Field(default=300.0, gt=0.0,
                                     description="per-request timeout (completions, weight loads)")
    max_concurrency: int = Field(default=32, ge=1, description="requests in flight per batch")
    weights_dir: str = Field(
        default="/dev/shm", description="directory trainer and server both see, where pushed "
                                        "weights are written as one safetensors file")
    server_args: list[str] = Field(default_factory=list,
                                   description="extra command-line arguments for a launched server")
    log_file: str | None = Field(default=None, description="launched server's output; None: a "
                                                           "temporary file, removed on close")


class OpenAIOptions(_Options):
    base_url: str = Field(default="http://127.0.0.1:8000/v1",
                          description="API root; /chat/completions is appended")
    model: str | None = Field(
        default=None, description="model name on the server; None asks GET /models for the first")
    api_key_env: str | None = Field(
        default="OPENAI_API_KEY",
        description="environment variable holding the API key; unset variable: no auth header")
    timeout_s: float = Field(default=120.0, gt=0.0, description="per-request timeout")
    max_retries: int = Field(default=3, ge=0,
                             description="retries on connection errors, timeouts, 408/409/429/5xx")
    backoff_s: float = Field(default=1.0, ge=0.0,
                             description="first retry delay, doubled at each retry")
    max_concurrency: int = Field(default=8, ge=1, description="requests in flight per batch")
    logprobs: bool = Field(default=False, description="ask for per-token log-probabilities")
    wait_for_server_s: float = Field(
        default=0.0, ge=0.0,
        description="at start, wait up to this long for GET /models to answer; 0 skips the check")
    extra_body: dict[str, Any] = Field(default_factory=dict,
                                       description="extra JSON fields for every request")
    headers: dict[str, str] = Field(default_factory=dict, description="extra HTTP headers")
