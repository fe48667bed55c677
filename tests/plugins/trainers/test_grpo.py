"""The ``grpo`` trainer: masking of environment turns, advantages per role and group, and real TRL
steps on the bundled SmolLM2-135M (weights change, checkpoint round trip)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.trainers.grpo_rows import (
    ConversationEncoder,
    EncodedSample,
    compute_advantages,
    encode_samples,
    micro_batches,
)
from spade_core.interfaces import TrainingSample

from fakes.grpo_samples import CONVERSATION, grpo_samples

@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from plugins.backends.model_source import resolve_model

    return AutoTokenizer.from_pretrained(resolve_model("bundled:smollm2-135m").path)


@pytest.fixture(scope="module")
def encoder(tokenizer):
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    return ConversationEncoder(
        lambda messages, gen: tokenizer.apply_chat_template(messages, tokenize=False,
                                                            add_generation_prompt=gen),
        lambda text: tokenizer(text, add_special_tokens=False)["input_ids"], [end])


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


@pytest.fixture(scope="module")
def backend():
    from plugins.backends.model_source import resolve_model
    from plugins.backends.transformers_backend import TransformersBackend

    return TransformersBackend(resolve_model("bundled:smollm2-135m").path, device="cpu")


@pytest.mark.slow
def test_grpo_step_trains_the_backends_module_and_checkpoints_round_trip(backend, tmp_path):
    import torch

    from plugins.trainers.grpo import GRPOTraining
    from plugins.trainers.options import GRPOOptions

    options = GRPOOptions(learning_rate=1e-4, lora={"r": 4, "alpha": 8},
                          per_device_train_batch_size=4, designer_delay_iterations=1)
    trainer = GRPOTraining(options, backend, None, 0, tmp_path)
    lora_b = {n: p.detach().clone() for n, p in backend.model.named_parameters() if "lora_B" in n}
    assert lora_b and all(not p.any() for p in lora_b.values())  # peft starts B at zero
    first = trainer.train(grpo_samples())
    assert first["designer_trained"] == 0.0 and first["designer_samples_trained"] == 0.0
    assert first["agent_samples_trained"] == 4.0 and first["optimizer_steps"] == 1.0
    for key in ("loss", "grad_norm", "agent_mean_reward", "designer_mean_reward", "trl/entropy"):
        assert key in first
    changed = {n for n, p in backend.model.named_parameters() if n in lora_b and p.any()}
    assert changed  # the very module the backend generates with was updated
    ids = torch.tensor([backend.formatter.encode([{"role": "user", "content": "hi"}])])
    with torch.no_grad():
        merged = backend.model(ids).logits  # between updates the adapter is folded in
        trainer._unmerge_adapter()
        unmerged = backend.model(ids).logits
        trainer._merge_adapter()
    assert torch.allclose(merged, unmerged, rtol=1e-4, atol=1e-3)
    second = trainer.train(grpo_samples())  # the designer delay is over
    assert second["designer_trained"] == 1.0 and second["designer_samples_trained"] == 2.0
    assert "tis_tokens" not in second  # nothing was held: no importance weights
    # A design held over a window: log-probs recorded now, trained after the policy moved, its
    # advantages weighted per token by clamp(exp(logp_now - logp_then), 0, 2).
    held = [s for s in grpo_samples() if s.role == "designer"]
    recorded = trainer.record_logprobs(held)
    rows, _ = encode_samples(held, trainer.encoder, options.max_tokens)
    assert [len(r) for r in recorded] == [len(row.completion_ids) for row in rows]
    assert all(v < 0 for r in recorded for v in r)
    trainer.train([s for s in grpo_samples() if s.role == "agent"])
    for sample, logps in zip(held, recorded):
        sample.meta["rollout_logps"] = logps
    third = trainer.train(held + [s for s in grpo_samples() if s.role == "agent"])
    assert third["tis_tokens"] > 0 and 0.0 < third["tis_mean_weight"] <= 2.0
    assert third["tis_mean_weight"] != 1.0  # the policy moved since the log-probs were taken
    trainer.save(tmp_path / "ckpt")
    saved = {n: p.detach().clone() for n, p in backend.model.named_parameters() if "lora_" in n}
    trainer.train(grpo_samples())
    trainer.load(tmp_path / "ckpt")
    after = {n: p for n, p in backend.model.named_parameters() if "lora_" in n}
    assert all(torch.equal(saved[n], after[n]) for n in saved)
    assert trainer.trained_iterations == 4 and trainer.optimizer_steps == 4
    out = backend.generate([[{"role": "user", "content": "hi"}]], max_new_tokens=4,
                           temperature=0.0)
    assert out[0].completion_ids


def _stamped(version, last_turn=None):
    """The agent plays as the asynchronous loop stamps them: generated with ``version``, the
    last reply with ``last_turn`` when given."""
    samples = [s for s in grpo_samples() if s.role == "agent" and s.group == "e1"]
    for sample in samples:
        sample.meta.update(policy_version=version, sample_id="x", turn_versions=[
            [2, version], [4, version if last_turn is None else last_turn]])
    return samples


@pytest.mark.slow
def test_stale_samples_weigh_exactly_one_until_the_policy_moves(tmp_path):
    """Asynchronous training: the trainer keeps the weights of the last versions and takes a
    stale sample's behaviour log-probs under those that generated it, in its training layout,
    so that with a learning rate of 0 every importance weight is exactly 1; once the policy
    moves they are not."""
    from fakes.bundled_model import bundled_model

    from plugins.backends.transformers_backend import TransformersBackend
    from plugins.trainers.grpo import GRPOTraining
    from plugins.trainers.options import GRPOOptions

    backend = TransformersBackend(bundled_model().path, device="cpu")
    trainer = GRPOTraining(GRPOOptions(learning_rate=0.0, lora={"r": 4, "alpha": 8},
                                       per_device_train_batch_size=4), backend, None, 0, tmp_path)
    trainer.keep_version(0, 1)
    fresh = trainer.train(_stamped(0))  # an update at learning rate 0
    assert fresh["tis_mean_weight"] == 1.0  # on-policy: the current weights themselves
    trainer.keep_version(1, 1)
    for group in trainer.optimizer.param_groups:  # from this update on the policy moves
        group["lr"] = 1e-2
    stale = trainer.train(_stamped(0, last_turn=1))  # one version stale (its first reply)
    assert stale["tis_tokens"] > 0 and stale["agent_samples_trained"] == 2.0
    assert stale["tis_mean_weight"] == 1.0 and stale["tis_clipped_share"] == 0.0
    trainer.keep_version(2, 1)
    assert sorted(trainer._snapshots) == [1, 2]  # at most level + 1 kept
    moved = trainer.train(_stamped(1))
    assert moved["tis_tokens"] > 0 and moved["tis_mean_weight"] != 1.0
    trainer.close()
    backend.close()


def test_grpo_refuses_a_backend_without_a_model():
    from plugins.trainers.grpo import GRPOTraining
    from plugins.trainers.options import GRPOOptions
    from spade_core.errors import ConfigError

    class Remote:
        tokenizer = None

    with pytest.raises(ConfigError, match="exposes no model"):
        GRPOTraining(GRPOOptions(), Remote(), None, 0, None)


def test_max_samples_caps_after_advantages_on_whole_groups(encoder):
    """Six of 30 plays are capped to; the baseline is still each whole group's mean, and only
    plays with a gradient are kept (a random six of 30 would usually all be zero-advantage)."""
    from types import SimpleNamespace

    from plugins.trainers.grpo import GRPOTraining
    from plugins.trainers.options import GRPOOptions

    samples = []
    for env in range(5):  # four environments every play fails, one won by two plays of six
        for k in range(6):
            reward = 1.0 if env == 4 and k < 2 else 0.0
            samples.append(TrainingSample("agent", CONVERSATION, reward, group=f"e{env}"))
    rows, _ = encode_samples(samples, encoder, 512)
    compute_advantages(rows, {"agent": "group"}, {"agent": "none"})
    useful = [r for r in rows if abs(r.advantage) > 1e-8]
    assert len(useful) == 6 and {r.group for r in useful} == {"e4"}
    assert sorted(round(r.advantage, 4) for r in useful) == [-0.3333] * 4 + [0.6667] * 2
    trainer = SimpleNamespace(options=GRPOOptions(max_samples=4), seed=0, trained_iterations=0)
    kept = GRPOTraining._cap(trainer, useful)
    assert len(kept) == 4 and all(r in useful for r in kept)


# -- option names: TRL's names, and only those; grpo_config ---------------------------------------

def test_trl_names_are_the_options_and_old_names_are_refused():
    from pydantic import ValidationError

    from plugins.trainers.options import GRPOOptions

    options = GRPOOptions(epsilon=0.1, epsilon_high=0.3, beta=0.01, per_device_train_batch_size=2,
                          num_iterations=2)
    assert options.model_dump()["epsilon"] == 0.1
    for old in ("clip_low", "clip_high", "kl_coef", "micro_batch_size", "epochs"):
        with pytest.raises(ValidationError, match=old):
            GRPOOptions.model_validate({old: 1})


def test_grpo_config_passthrough_is_checked_against_trl():
    from plugins.trainers.preflight import grpo_config_problems

    assert grpo_config_problems({"delta": 4.0, "importance_sampling_level": "sequence"}) == []
    problems = grpo_config_problems({"detla": 4.0, "epsilon": 0.1, "output_dir": "x"})
    assert problems == [
        "trainer.options.grpo_config.epsilon: not settable here; set trainer.options.epsilon "
        "instead",
        "trainer.options.grpo_config.output_dir: not settable here; the trainer sets it itself",
        "trainer.options.grpo_config.detla: trl.GRPOConfig has no field 'detla'; did you mean "
        "'delta'?"]


def test_the_installed_trl_has_what_the_trainer_uses_and_a_missing_member_is_named(monkeypatch):
    from plugins.trainers import preflight
    from plugins.trainers.options import GRPOOptions
    from spade_core.errors import ConfigError

    assert preflight.trl_problems() == []
    monkeypatch.setattr(preflight, "TRL_TRAINER_MEMBERS",
                        (*preflight.TRL_TRAINER_MEMBERS, "_no_such_method"))
    (problem,) = preflight.trl_problems()
    assert "lacks GRPOTrainer._no_such_method" in problem and "Tested versions" in problem
    with pytest.raises(ConfigError, match="_no_such_method"):
        preflight.require_trl(GRPOOptions())


class _Recorded:
    """The backend, recording what it was asked and what it answered (a spy over the real one)."""

    def __init__(self, backend):
        self.backend = backend
        self.asked: list = []
        self.replies: list[str] = []

    def generate(self, conversations, **kwargs):
        out = self.backend.generate(conversations, **kwargs)
        self.asked += [list(c) for c in conversations]
        self.replies += [g.text for g in out]
        return out

    def __getattr__(self, name):
        return getattr(self.backend, name)


@pytest.mark.slow
def test_an_update_raises_the_positive_replies_and_the_evaluation_plays_the_updated_model(
        tmp_path):
    """The wiring the held-out experiments rest on (issue 37): the loop's evaluation plays two
    items of the held-out yes/no pool greedily; one GRPO update on those very conversations,
    the boxed right answer rewarded 1 and the model's own reply 0, raises the log-probability of
    every rewarded reply (and its lead over the unrewarded one) under the module the backend generates with; the same evaluation then
    answers differently, and with the adapter switched off it answers exactly as before, so the
    difference is the adapter and the evaluation applies it."""
    import json

    import torch

    from fakes.bundled_model import bundled_model
    from fakes.in_process import FakeInProcessSandbox
    from plugins.backends.transformers_backend import TransformersBackend
    from plugins.evals.programs_suite import ProgramsSuite
    from plugins.trainers.grpo import GRPOTraining
    from plugins.trainers.options import GRPOOptions
    from spade_core.eval.loop import LoopEvaluator
    from spade_core.interfaces import EvalSettings
    from spade_core.plugins import load_plugins

    lines = Path("plugins/evals/data/learning_pool_eval.jsonl").read_text().splitlines()
    pool = tmp_path / "pool.jsonl"  # the first question answered yes, the first answered no
    pool.write_text("\n".join(next(x for x in lines if json.loads(x)["answer"] == answer)
                              for answer in ("yes", "no")) + "\n")
    family = load_plugins().registry.build("env_family", "reasoning", {}, "test")
    suite = ProgramsSuite(str(pool), FakeInProcessSandbox(), [family], bucket="answer")
    items = suite.items(None, 0)
    evaluator = LoopEvaluator(1, EvalSettings(samples=1, temperature=0.0, max_new_tokens=12,
                                              seed=0, max_turns=1), [("pool", suite, items)])
    backend = TransformersBackend(bundled_model().path, device="cpu")
    seen = _Recorded(backend)
    evaluator.evaluate(0, seen)
    asked, before = list(seen.asked), list(seen.replies)
    assert len(asked) == 2 and not any(f"\\boxed{{{i.bucket}}}" in r for i, r in zip(items, before))
    trainer = GRPOTraining(GRPOOptions(learning_rate=1e-4, lora={"r": 8, "alpha": 16},
                                       per_device_train_batch_size=4), backend, None, 0, tmp_path)
    samples = []
    for item, conversation, said in zip(items, asked, before):
        for reply, reward in ((f"\\boxed{{{item.bucket}}}", 1.0), (said, 0.0)):
            samples.append(TrainingSample(
                "agent", conversation + [{"role": "assistant", "content": reply}], reward,
                group=item.id))
    rows, _ = encode_samples(samples, trainer.encoder, 2048)

    def logp(row) -> float:  # teacher-forced, through the module the backend generates with
        ids = torch.tensor([row.prompt_ids + row.completion_ids])
        with torch.no_grad():
            logps = torch.log_softmax(backend.model(ids).logits[0, :-1].float(), -1)
        taken = logps.gather(1, ids[0, 1:, None])[len(row.prompt_ids) - 1:, 0]
        return float((taken * torch.tensor(row.env_mask, dtype=torch.float)).sum())

    old = [logp(row) for row in rows]
    metrics = trainer.train(samples)
    assert metrics["optimizer_steps"] == 1.0 and metrics["agent_samples_trained"] == 4.0
    new = [logp(row) for row in rows]
    assert all(b > a + 0.1 for a, b in zip(old[::2], new[::2])), (old, new)  # rewarded: up
    gaps = [(new[k] - new[k + 1]) - (old[k] - old[k + 1]) for k in (0, 2)]
    assert all(g > 0.1 for g in gaps), (old, new)  # and gained on the unrewarded reply
    seen.replies.clear()
    evaluator.evaluate(0, seen)
    assert seen.replies != before  # the evaluation played the updated model
    seen.replies.clear()
    trainer._unmerge_adapter()
    with trainer.model.disable_adapter():
        evaluator.evaluate(0, seen)
    trainer._merge_adapter()
    assert seen.replies == before  # without the adapter: the untrained model's replies
    trainer.close()
    backend.close()
