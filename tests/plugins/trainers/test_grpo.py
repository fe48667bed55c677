"""The ``grpo`` trainer: real TRL steps on the bundled SmolLM2-135M (weights change, checkpoint
round trip, importance weights of stale samples), the cap on samples, and an update the
evaluation plays. The rows it trains on are tested in test_grpo_rows.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.trainers.grpo_rows import compute_advantages, encode_samples
from spade_core.interfaces import TrainingSample

from fakes.grpo_samples import CONVERSATION, grpo_samples


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
                                              seed=0, max_turns=1), [("programs", suite, items)])
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
