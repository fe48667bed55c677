"""The ``grpo`` trainer: one policy, two roles, GRPO through TRL on the loop's own samples.

The loop has already generated and rewarded every sample, so TRL's generation and reward steps do
not apply; the trainer builds TRL's ``GRPOTrainer`` once (model preparation, LoRA through peft,
the fused log-prob head, optimizer, reference model for the KL term) and feeds it batches in TRL's
own layout, calling its ``compute_loss`` (the clipped GRPO objective with clip-higher, KL and loss
aggregation) under our optimizer loop. What we add: multi-turn tokenisation with environment turns
masked (TRL's ``tool_mask``), advantages per role and per group, designer delay, checkpoints.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plugins.trainers.grpo_options import GRPOOptions
from plugins.trainers.preflight import require_trl
from plugins.trainers.samples import (
    ROLES,
    ConversationEncoder,
    EncodedSample,
    collate,
    compute_advantages,
    encode_samples,
    micro_batches,
)
from spade_core.errors import ConfigError
from spade_core.interfaces import TrainableBackend, Trainer, TrainingSample
from spade_core.records import Role


def loop_reward(prompts: list[Any], completions: list[Any], reward: list[float] | None = None,
                **kwargs: Any) -> list[float]:
    """TRL reward function that returns the loop's own rewards (passed as the ``reward`` column).
    TRL requires one; this trainer scores nothing itself, the loop already did."""
    return [float(r) for r in (reward or [0.0] * len(completions))]


class GRPOTraining(Trainer):
    """Trains the generation backend's own module (``transformers``) or a copy whose weights are
    pushed to the backend after each update (``vllm``: ``update_weights``)."""

    def __init__(self, options: GRPOOptions, backend: Any, model_spec: str | None, seed: int,
                 run_dir: Path | None) -> None:
        require_trl(options)
        import torch
        from datasets import Dataset
        from trl import GRPOConfig, GRPOTrainer

        self.options = options
        self.seed = seed
        self.backend = backend
        self.trained_iterations = 0
        self.optimizer_steps = 0
        if not isinstance(backend, TrainableBackend):
            raise ConfigError(
                f"trainer 'grpo': the generation backend {type(backend).__name__} exposes no model "
                "to train; use backend 'transformers' (trains the module it generates with) or "
                "'vllm' (weights synced after each update); 'openai' serves frozen roles only")
        policy = backend.policy()
        if policy.module is not None:
            model, self._sync = policy.module, None
        else:
            model, self._sync = self._own_model(options.model or model_spec), backend.update_weights
        tokenizer = policy.tokenizer
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                          else policy.stop_ids[0])

        def render(messages: list[dict[str, Any]], generation_prompt: bool) -> str:
            return tokenizer.apply_chat_template(messages, chat_template=policy.chat_template,
                                                 tokenize=False,
                                                 add_generation_prompt=generation_prompt)

        def tokenize(text: str) -> list[int]:
            return list(tokenizer(text, add_special_tokens=False)["input_ids"])

        self.encoder = ConversationEncoder(render, tokenize, policy.stop_ids)
        device = next(model.parameters()).device
        args = GRPOConfig(
            output_dir=str((run_dir or Path(".")) / "trainer-scratch"),
            use_cpu=device.type == "cpu", bf16=options.bf16, learning_rate=options.learning_rate,
            weight_decay=options.weight_decay, max_grad_norm=options.max_grad_norm,
            epsilon=options.epsilon, epsilon_high=options.epsilon_high, beta=options.beta,
            loss_type=options.loss_type, temperature=options.temperature,
            activation_checkpointing=options.gradient_checkpointing, seed=seed,
            per_device_train_batch_size=2, num_generations=2, gradient_accumulation_steps=1,
            report_to="none", save_strategy="no", logging_strategy="no", disable_dropout=True,
            **options.grpo_config)
        peft_config = None
        if options.lora is not None:
            from peft import LoraConfig

            lora = options.lora
            peft_config = LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                                     target_modules=lora.target_modules, task_type="CAUSAL_LM")
        self.trainer = GRPOTrainer(
            model=model, reward_funcs=[loop_reward], args=args,
            train_dataset=Dataset.from_dict({"prompt": ["", ""], "reward": [0.0, 0.0]}),
            processing_class=tokenizer, peft_config=peft_config)
        scratch = Path(args.output_dir)  # TRL creates it; nothing is written there by this trainer
        if scratch.is_dir() and not any(scratch.iterdir()):
            scratch.rmdir()
        self.model = self.trainer.model
        self.device = device
        self.optimizer = self.trainer.create_optimizer()
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.model.eval()
        self._torch = torch
        self._merged = False
        self._merge_adapter()

    def _merge_adapter(self) -> None:
        """Fold the LoRA adapter into the base weights so that generation runs at base speed."""
        if self.options.lora is not None and self.options.lora.merge_for_generation \
                and not self._merged:
            with self._torch.no_grad():
                self.model.merge_adapter()
            self._merged = True

    def _unmerge_adapter(self) -> None:
        if self._merged:
            with self._torch.no_grad():
                self.model.unmerge_adapter()
            self._merged = False

    def _own_model(self, spec: str | None) -> Any:
        import torch
        from transformers import AutoModelForCausalLM

        from plugins.backends.model_source import DEFAULT_MODEL, resolve_model

        path = resolve_model(spec or DEFAULT_MODEL).path
        cuda = torch.cuda.is_available()
        model = AutoModelForCausalLM.from_pretrained(
            path, dtype=torch.bfloat16 if cuda else torch.float32)
        return model.to("cuda" if cuda else "cpu")

    # -- one update per iteration ----------------------------------------------------------------

    def _designer_on(self) -> bool:
        o = self.options
        return o.train_designer and self.trained_iterations >= o.designer_delay_iterations

    def _cap(self, rows: list[EncodedSample]) -> list[EncodedSample]:
        """At most ``max_samples`` rows per role, a seeded random subset. Applied after the
        advantages are computed on every sample, so baselines use whole groups and the cap only
        chooses among rows that carry a gradient."""
        limit = self.options.max_samples
        if limit is None:
            return rows
        rng = random.Random(self.seed * 1_000_003 + self.trained_iterations)
        kept: list[EncodedSample] = []
        for role in ROLES:
            mine = [r for r in rows if r.role == role]
            kept += rng.sample(mine, limit) if len(mine) > limit else mine
        return kept

    def _logps(self, batch: dict[str, Any], reference: bool) -> Any:
        """Per-token log-probs of a batch without gradients: the pre-update policy, or the
        reference (initial) model for the KL term."""
        from trl.trainer.utils import use_adapter

        torch = self._torch
        input_ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
        mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
        keep = batch["completion_ids"].size(1)
        trainer = self.trainer
        with torch.no_grad():
            if not reference:
                return trainer._get_per_token_logps_and_entropies(self.model, input_ids, mask,
                                                                  keep)[0]
            if trainer.ref_model is not None:
                return trainer._get_per_token_logps_and_entropies(trainer.ref_model, input_ids,
                                                                  mask, keep)[0]
            with use_adapter(self.model, adapter_name=None):
                return trainer._get_per_token_logps_and_entropies(self.model, input_ids, mask,
                                                                  keep)[0]

    def train(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
        """One GRPO update on an iteration's samples; returns loss, rewards and TRL's figures."""
        started = time.perf_counter()
        self._unmerge_adapter()
        try:
            return self._train(samples, started)
        finally:
            self._merge_adapter()

    def _train(self, samples: Sequence[TrainingSample], started: float) -> dict[str, float]:
        o = self.options
        metrics: dict[str, float] = {}
        for role in ROLES:
            rewards = [s.reward for s in samples if s.role == role]
            metrics[f"{role}_samples"] = float(len(rewards))
            metrics[f"{role}_mean_reward"] = sum(rewards) / len(rewards) if rewards else 0.0
        designer_on = self._designer_on()
        metrics["designer_trained"] = float(designer_on)
        chosen = [s for s in samples if designer_on or s.role != Role.DESIGNER]
        rows, skipped = encode_samples(chosen, self.encoder, o.max_tokens)
        metrics.update({k: float(v) for k, v in skipped.items()})
        compute_advantages(rows, {Role.AGENT: o.agent_baseline, Role.DESIGNER: o.designer_baseline},
                           o.scale_rewards)
        # Rows with no advantage (and no KL term) carry no gradient; the cap chooses among the rest.
        useful = self._cap([r for r in rows if o.beta > 0 or abs(r.advantage) > 1e-8])
        for role in ROLES:
            mine = [r for r in useful if r.role == role]
            metrics[f"{role}_samples_trained"] = float(len(mine))
            metrics[f"{role}_tokens_trained"] = float(sum(sum(r.env_mask) for r in mine))
        self.trained_iterations += 1
        if not useful:
            metrics.update(loss=0.0, optimizer_steps=0.0, seconds=time.perf_counter() - started)
            return metrics
        batches = micro_batches(useful, o.per_device_train_batch_size)
        random.Random(self.seed + 7 * self.trained_iterations).shuffle(batches)
        tensors = [collate(b, self.pad_id, self.device) for b in batches]
        per_step = o.gradient_accumulation_steps or len(tensors)
        steps = math.ceil(len(tensors) / per_step) * o.num_iterations
        if steps > 1:  # later steps see an updated policy: keep the sampling policy's log-probs
            for t in tensors:
                t["old_per_token_logps"] = self._logps(t, reference=False)
        if o.beta > 0:
            for t in tensors:
                t["ref_per_token_logps"] = self._logps(t, reference=True)
        losses, norms = self._optimize(tensors, per_step)
        self.model.eval()
        if self._sync is not None:
            self._push_weights()
        metrics.update(loss=sum(losses) / len(losses), grad_norm=sum(norms) / len(norms),
                       optimizer_steps=float(len(losses)),
                       mean_abs_advantage=sum(abs(r.advantage) for r in useful) / len(useful))
        for name, values in self.trainer._metrics["train"].items():
            if values:
                metrics[f"trl/{name}"] = float(sum(values) / len(values))
        self.trainer._metrics["train"].clear()
        metrics["seconds"] = time.perf_counter() - started
        return metrics

    def _optimize(self, tensors: list[dict[str, Any]], per_step: int
                  ) -> tuple[list[float], list[float]]:
        torch = self._torch
        trainer, model = self.trainer, self.model
        steps_per_generation = trainer.args.steps_per_generation or 1
        losses: list[float] = []
        norms: list[float] = []
        model.train()
        for _ in range(self.options.num_iterations):
            for start in range(0, len(tensors), per_step):
                group = tensors[start:start + per_step]
                trainer.current_gradient_accumulation_steps = len(group)
                tokens = sum(float((t["completion_mask"] * t["tool_mask"]).sum()) for t in group)
                step_loss = 0.0
                for t in group:
                    inputs = dict(t)
                    inputs["num_items_in_batch"] = torch.tensor(
                        tokens * steps_per_generation / len(group), device=self.device)
                    with trainer.compute_loss_context_manager():
                        loss = trainer.compute_loss(model, inputs)
                    trainer.accelerator.backward(loss)
                    step_loss += float(loss.detach())
                norm = torch.nn.utils.clip_grad_norm_(self.params, self.options.max_grad_norm)
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.optimizer_steps += 1
                losses.append(step_loss)
                norms.append(float(norm))
        return losses, norms

    def _push_weights(self) -> None:
        """Send the updated weights to a backend that holds its own copy (vLLM)."""
        model = self.model
        merged = hasattr(model, "merge_adapter") and not self._merged
        if merged:
            model.merge_adapter()
        try:
            named = []
            for name, tensor in model.state_dict().items():
                if "lora_" in name or "modules_to_save" in name:
                    continue
                name = name.removeprefix("base_model.model.").replace(".base_layer", "")
                named.append((name, tensor))
            self._sync(named)
        finally:
            if merged:
                model.unmerge_adapter()

    # -- checkpoints ------------------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        """Model weights (or the LoRA adapter), optimizer state and counters under ``directory``."""
        from safetensors.torch import save_model

        directory.mkdir(parents=True, exist_ok=True)
        torch = self._torch
        if hasattr(self.model, "peft_config"):
            self.model.save_pretrained(str(directory / "adapter"))
        else:
            save_model(self.model, str(directory / "model.safetensors"))
            self.model.config.save_pretrained(str(directory))
        torch.save(self.optimizer.state_dict(), directory / "optimizer.pt")
        (directory / "trainer_state.json").write_text(json.dumps({
            "trained_iterations": self.trained_iterations,
            "optimizer_steps": self.optimizer_steps}))

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote, into the same module the backend generates with."""
        from safetensors.torch import load_file, load_model

        torch = self._torch
        if hasattr(self.model, "peft_config"):
            from peft import set_peft_model_state_dict

            self._unmerge_adapter()
            weights = load_file(str(directory / "adapter" / "adapter_model.safetensors"))
            result = set_peft_model_state_dict(self.model, weights)
            unexpected = getattr(result, "unexpected_keys", [])
            if unexpected:
                raise ConfigError(f"{directory}: adapter does not fit this model ({unexpected[:3]})")
        else:
            load_model(self.model, str(directory / "model.safetensors"), strict=True)
        state = torch.load(directory / "optimizer.pt", map_location=self.device, weights_only=True)
        self.optimizer.load_state_dict(state)
        counters = json.loads((directory / "trainer_state.json").read_text())
        self.trained_iterations = int(counters["trained_iterations"])
        self.optimizer_steps = int(counters["optimizer_steps"])
        self._merge_adapter()
        if self._sync is not None:
            self._push_weights()

    def close(self) -> None:
        self.trainer = None  # type: ignore[assignment]


def build_grpo(options: GRPOOptions, context: Any) -> GRPOTraining:
    """Factory: needs the run's generation backend (built before the trainer)."""
    backend = context.components.get("generation_backend")
    if backend is None:
        raise ConfigError("trainer 'grpo' needs the run's generation backend; none was built")
    return GRPOTraining(options, backend, context.model, context.seed, context.run_dir)


__all__ = ["GRPOTraining", "build_grpo", "loop_reward", "EncodedSample"]
