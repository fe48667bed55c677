"""The rows GRPO trains on: masking of environment turns (only the agent's own tokens are
trained), prompts too long skipped and counted, a role's template variables, advantages per role,
group and skill, and micro-batches that keep roles apart."""

from __future__ import annotations

import pytest

from plugins.trainers.grpo_rows import (
    ConversationEncoder,
    EncodedSample,
    compute_advantages,
    encode_samples,
    micro_batches,
)
from spade_core.interfaces import TrainingSample

from fakes.grpo_samples import CONVERSATION


def test_only_the_agents_own_tokens_are_trained(encoder, tokenizer):
    prompt, completion, mask = encoder.encode(CONVERSATION)
    assert tokenizer.decode(prompt).endswith("<|im_start|>assistant\n")
    trained = tokenizer.decode([t for t, m in zip(completion, mask) if m])
    assert trained == "\\boxed{41}<|im_end|>\\boxed{42}<|im_end|>"
    masked = tokenizer.decode([t for t, m in zip(completion, mask) if not m])
    assert "wrong, try again" in masked and "boxed" not in masked
    whole = tokenizer.apply_chat_template(CONVERSATION, tokenize=False)
    assert tokenizer.decode(prompt + completion) == whole


def test_masked_turns_are_not_trained(encoder, tokenizer):
    """A malformed tool call the reference protocol masks (``meta["masked_turns"]``) gets no
    loss, like the environment's turns; the other replies are trained as usual."""
    from plugins.trainers.grpo_rows import collate

    conversation = [dict(m) for m in CONVERSATION]
    conversation[2]["content"] = "<tool_call>{not json}</tool_call>"
    masked = TrainingSample("agent", conversation, 1.0, group="a", meta={"masked_turns": [2]})
    [row], _ = encode_samples([masked], encoder, max_tokens=2048)
    trained = tokenizer.decode([t for t, m in zip(row.completion_ids, row.env_mask) if m])
    assert trained == "\\boxed{42}<|im_end|>"
    untrained = tokenizer.decode([t for t, m in zip(row.completion_ids, row.env_mask) if not m])
    assert "<tool_call>{not json}</tool_call>" in untrained
    batch = collate([row], tokenizer.pad_token_id or 0, "cpu")  # what the loss multiplies by
    assert batch["tool_mask"][0].tolist() == row.env_mask
    [plain], _ = encode_samples([TrainingSample("agent", conversation, 1.0)], encoder, 2048)
    assert sum(plain.env_mask) > sum(row.env_mask)
    only = TrainingSample("agent", conversation[:3], 1.0, meta={"masked_turns": [2]})
    assert encode_samples([only], encoder, 2048)[1] == {"agent_samples_empty": 1}


def test_long_prompts_are_skipped_and_counted(encoder):
    samples = [TrainingSample("agent", CONVERSATION, 1.0, group="a")]
    rows, skipped = encode_samples(samples, encoder, max_tokens=16)
    assert rows == [] and skipped == {"agent_samples_too_long": 1}
    rows, skipped = encode_samples(samples, encoder, max_tokens=2048)
    assert len(rows) == 1 and not skipped
    no_turn = [TrainingSample("designer", CONVERSATION[:2], 1.0)]
    assert encode_samples(no_turn, encoder, 2048)[1] == {"designer_samples_unencodable": 1}


def test_a_roles_template_variables_render_the_sample_as_generation_did(tokenizer):
    """Qwen3's template with ``enable_thinking`` false puts an empty think block in the prompt:
    a sample whose role set it (meta) or whose backend set it (policy) trains on the reply
    only; without the variable that block would be trained on as if the policy wrote it."""
    from plugins.backends.chat_format import load_template
    from plugins.trainers.grpo_rows import policy_render
    from spade_core.interfaces import TrainablePolicy

    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    messages = [{"role": "user", "content": "6 x 7?"}, {"role": "assistant", "content": "42"}]

    def trained(policy, meta):
        encoder = ConversationEncoder(policy_render(policy), lambda text: tokenizer(
            text, add_special_tokens=False)["input_ids"], [end])
        [row], _ = encode_samples([TrainingSample("agent", messages, 1.0, meta=meta)], encoder,
                                  2048)
        return (tokenizer.decode(row.prompt_ids),
                tokenizer.decode([t for t, m in zip(row.completion_ids, row.env_mask) if m]))

    qwen3 = load_template("trl:qwen3")
    plain = TrainablePolicy(tokenizer, qwen3, [end])
    off = {"enable_thinking": False}
    prompt, reply = trained(plain, {"chat_template_kwargs": off})
    assert prompt.endswith("assistant\n<think>\n\n</think>\n\n") and reply == "42<|im_end|>"
    assert trained(TrainablePolicy(tokenizer, qwen3, [end], chat_template_kwargs=off), {}) \
        == (prompt, reply)
    prompt, reply = trained(plain, {})
    assert prompt.endswith("assistant\n") and reply.startswith("<think>")


def _rows(rewards):
    return [EncodedSample(role, group, r, [1], [2], [1]) for role, group, r in rewards]


def test_advantages_per_role_and_group_without_std():
    rows = _rows([("agent", "e1", 1.0), ("agent", "e1", 0.0), ("agent", "e2", 0.0),
                  ("agent", "e2", 0.0), ("designer", "e1", 1.0), ("designer", "e2", -0.5)])
    compute_advantages(rows, {"agent": "group", "designer": "role"},
                       {"agent": "none", "designer": "none"})
    assert [r.advantage for r in rows] == [0.5, -0.5, 0.0, 0.0, 0.75, -0.75]


def test_advantages_scaled_by_group_or_role_std():
    rows = _rows([("agent", "e1", 1.0), ("agent", "e1", 0.0), ("agent", "e2", 1.0),
                  ("agent", "e2", 1.0)])
    compute_advantages(rows, {"agent": "group"}, {"agent": "group"})
    assert rows[0].advantage == pytest.approx(0.5 / (0.5 + 1e-8))
    assert rows[2].advantage == 0.0
    compute_advantages(rows, {"agent": "role"}, {"agent": "role"})
    std = (3 * 0.25 ** 2 + 0.75 ** 2) ** 0.5 / 2
    assert rows[1].advantage == pytest.approx(-0.75 / (std + 1e-8))


def test_designer_advantages_centred_per_skill_times_their_scale():
    rows = [EncodedSample("designer", f"e{i}", r, [1], [2], [1], skill=skill,
                          advantage_scale=2.0)
            for i, (skill, r) in enumerate([("a", 1.0), ("a", 0.0), ("b", 0.5)])]
    compute_advantages(rows, {"designer": "skill"}, {"designer": "none"})
    assert [r.advantage for r in rows] == [1.0, -1.0, 0.0]


def test_micro_batches_keep_roles_apart():
    rows = _rows([("agent", "a", 1.0)] * 5 + [("designer", "a", 1.0)] * 2)
    batches = micro_batches(rows, 2)
    assert all(len({r.role for r in b}) == 1 and len(b) <= 2 for b in batches)
    assert sum(len(b) for b in batches) == 7
