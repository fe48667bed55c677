"""The transformers backend on the real bundled model (SmolLM2-135M-Instruct): batched greedy and
sampled generation, token ids and log-probabilities, tools, sampling options, chat template
variables and errors."""

from __future__ import annotations

import pytest
import torch
from fakes.backend_conversations import CONVERSATIONS
from fakes.bundled_model import bundled_model

from plugins.backends.generation_errors import GenerationError
from spade_core.errors import ConfigError


def test_greedy_batch_is_deterministic_and_consistent(backend):
    first = backend.generate(CONVERSATIONS, max_new_tokens=12, temperature=0.0)
    second = backend.generate(CONVERSATIONS, max_new_tokens=12, temperature=0.0)
    assert [g.text for g in first] == [g.text for g in second]
    assert [g.completion_ids for g in first] == [g.completion_ids for g in second]
    assert "Paris" in first[0].text  # the model really answers (greedy, so stable)
    for conversation, g in zip(CONVERSATIONS, first):
        assert g.prompt_ids == backend.formatter.encode(conversation)
        assert backend.tokenizer.decode(g.prompt_ids) == backend.formatter.render(conversation)
        assert backend.tokenizer.decode(g.completion_ids, skip_special_tokens=True) == g.text
        assert len(g.logprobs) == len(g.completion_ids) >= 1
        assert all(lp <= 0.0 for lp in g.logprobs)
        if g.finish_reason == "stop":
            assert g.completion_ids[-1] in backend.stop_ids
        else:
            assert g.finish_reason == "length" and len(g.completion_ids) == 12


def test_stops_at_end_of_turn(backend):
    [g] = backend.generate(CONVERSATIONS[:1], max_new_tokens=40, temperature=0.0)
    assert g.finish_reason == "stop"
    assert g.completion_ids[-1] == backend.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert "<|im_end|>" not in g.text


def test_logprobs_match_a_forward_pass(backend):
    """Recorded log-probs equal log_softmax(logits / T) of a plain forward pass, padded row too."""
    gens = backend.generate(CONVERSATIONS, max_new_tokens=10, temperature=0.7, seed=5)
    for g in gens:
        ids = torch.tensor([g.prompt_ids + g.completion_ids])
        with torch.no_grad():
            logits = backend.model(ids).logits[0].float() / 0.7
        logp = torch.log_softmax(logits, dim=-1)
        start = len(g.prompt_ids) - 1
        expected = [logp[start + i, t].item() for i, t in enumerate(g.completion_ids)]
        assert g.logprobs == pytest.approx(expected, abs=2e-3)


def test_seeded_sampling_is_reproducible_and_leaves_global_rng_alone(backend):
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    a = backend.generate(CONVERSATIONS, max_new_tokens=8, temperature=1.0, seed=7)
    assert torch.equal(torch.rand(3), expected_next)
    b = backend.generate(CONVERSATIONS, max_new_tokens=8, temperature=1.0, seed=7)
    c = backend.generate(CONVERSATIONS, max_new_tokens=8, temperature=1.0, seed=8)
    assert [g.completion_ids for g in a] == [g.completion_ids for g in b]
    assert [g.completion_ids for g in a] != [g.completion_ids for g in c]


def test_batching_keeps_order_across_chunks(backend):
    """More conversations than batch_size, of mixed lengths: results come back in input order."""
    questions = [f"Say the number {n}." + " Please." * (n % 4) for n in range(10)]
    convs = [[{"role": "user", "content": q}] for q in questions]
    gens = backend.generate(convs, max_new_tokens=2, temperature=0.0)
    assert [g.prompt_ids for g in gens] == [backend.formatter.encode(c) for c in convs]


def test_top_k_one_and_a_tiny_top_p_sample_the_greedy_reply(backend):
    """Per-call truncation really reaches the sampler: with only the likeliest token left, any
    temperature reproduces greedy decoding, while plain sampling at that temperature does not."""
    greedy = backend.generate(CONVERSATIONS, max_new_tokens=12, temperature=0.0)
    hot = dict(max_new_tokens=12, temperature=1.5, seed=3)
    plain = backend.generate(CONVERSATIONS, **hot)
    top_k = backend.generate(CONVERSATIONS, top_k=1, **hot)
    top_p = backend.generate(CONVERSATIONS, top_p=1e-6, **hot)
    ids = [g.completion_ids for g in greedy]
    assert [g.completion_ids for g in plain] != ids
    assert [g.completion_ids for g in top_k] == ids == [g.completion_ids for g in top_p]
    # None keeps the backend's own setting (off here): the same draw as no argument at all
    again = backend.generate(CONVERSATIONS, top_p=None, top_k=None, **hot)
    assert [g.completion_ids for g in again] == [g.completion_ids for g in plain]
    with pytest.raises(GenerationError, match="top_p must be in"):
        backend.generate(CONVERSATIONS, top_p=0.0, **hot)
    with pytest.raises(GenerationError, match="top_k must be >= 0"):
        backend.generate(CONVERSATIONS, top_k=-1, **hot)


def test_backend_top_k_option_is_the_default_a_call_overrides():
    from plugins.backends.transformers_backend import TransformersBackend

    narrow = TransformersBackend(bundled_model().path, device="cpu", top_k=1)
    hot = dict(max_new_tokens=10, temperature=1.5, seed=3)
    greedy = narrow.generate(CONVERSATIONS, max_new_tokens=10, temperature=0.0)
    assert [g.completion_ids for g in narrow.generate(CONVERSATIONS, **hot)] == \
        [g.completion_ids for g in greedy]
    assert [g.completion_ids for g in narrow.generate(CONVERSATIONS, top_k=0, **hot)] != \
        [g.completion_ids for g in greedy]
    narrow.close()


def test_chat_template_kwargs_reach_the_template(backend):
    """SmolLM2's template ignores ``enable_thinking``; Qwen3's (TRL's copy) honours it, per call
    and as the backend's option, and the prompt generation starts from shows it."""
    from plugins.backends.transformers_backend import TransformersBackend

    conv = CONVERSATIONS[:1]
    assert backend.formatter.render(conv[0], chat_template_kwargs={"enable_thinking": False}) \
        == backend.formatter.render(conv[0])
    qwen = TransformersBackend(bundled_model().path, device="cpu", chat_template="trl:qwen3")
    off = {"enable_thinking": False}
    [default] = qwen.generate(conv, max_new_tokens=2, temperature=0.0)
    [no_think] = qwen.generate(conv, max_new_tokens=2, temperature=0.0, chat_template_kwargs=off)
    assert qwen.tokenizer.decode(default.prompt_ids).endswith("<|im_start|>assistant\n")
    assert qwen.tokenizer.decode(no_think.prompt_ids).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    qwen.close()
    quiet = TransformersBackend(bundled_model().path, device="cpu", chat_template="trl:qwen3",
                                chat_template_kwargs=off)
    assert quiet.formatter.render(conv[0]).endswith("</think>\n\n")
    assert quiet.policy().chat_template_kwargs == off  # the trainer renders as generation did
    # a call's own variables go over the backend's
    assert quiet.formatter.render(conv[0], chat_template_kwargs={"enable_thinking": True}) \
        .endswith("<|im_start|>assistant\n")
    quiet.close()
    with pytest.raises(ConfigError, match="tokenize are arguments of apply_chat_template"):
        backend.formatter.render(conv[0], chat_template_kwargs={"tokenize": True})


def test_invalid_requests_are_clear_errors(backend):
    with pytest.raises(GenerationError, match="max_new_tokens"):
        backend.generate(CONVERSATIONS, max_new_tokens=0, temperature=0.0)
    with pytest.raises(GenerationError, match="conversation 1"):
        backend.generate([CONVERSATIONS[0], []], max_new_tokens=2, temperature=0.0)
    assert backend.generate([], max_new_tokens=2, temperature=0.0) == []
