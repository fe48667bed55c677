"""The ``grpo`` trainer: one policy, two roles, GRPO through TRL on the loop's own samples.

The loop has already generated and rewarded every sample, so TRL's generation and reward steps do
not apply; the trainer builds TRL's ``GRPOTrainer`` once (model preparation, LoRA through peft,
the fused log-prob head, optimizer, reference model for the KL term) and feeds it batches in TRL's
own layout, calling its ``compute_loss`` (the clipped GRPO objective with clip-higher, KL and loss
aggregation) under our optimizer loop. What we add: multi-turn tokenisation with environment turns
masked (TRL's ``tool_mask``), advantages per role and per group, designer delay, checkpoints.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plugins.trainers.data_parallel import Command, Commands, StepShard, shard_steps
from plugins.trainers.options import GRPOOptions
from plugins.trainers.grpo_preflight import require_trl
from plugins.trainers.grpo_rows import (
    ROLES,
    ConversationEncoder,
    EncodedSample,
    collate,
    compute_advantages,
    encode_samples,
    micro_batches,
    policy_render,
    tis_weights,
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
    pushed to the backend after each update (``vllm``: ``update_weights``).

    Under ``accelerate launch`` every rank builds one; rank 0's calls are replayed on the others
    (:mod:`plugins.trainers.data_parallel`) and each rank trains its shard of every optimizer step
    through accelerate's prepared model (DDP, DeepSpeed or FSDP as the launch configures)."""

    supports_followers = True

    def __init__(self, options: GRPOOptions, backend: Any, model_spec: str | None, seed: int,
                 run_dir: Path | None) -> None:
        require_trl(options)
        import torch
        from accelerate.utils import DistributedType
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
                "to train; use backend 'transformers' (trains the module it generates with), "
                "'vllm' or 'vllm-server' (weights pushed after each update); 'openai' serves "
                "frozen roles only")
        policy = backend.policy()
        if policy.module is not None:
            model, self._sync = policy.module, None
        else:
            model, self._sync = self._own_model(options.model or model_spec), backend.update_weights
        tokenizer = policy.tokenizer
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                          else policy.stop_ids[0])

        def tokenize(text: str) -> list[int]:
            return list(tokenizer(text, add_special_tokens=False)["input_ids"])

        self.encoder = ConversationEncoder(policy_render(policy), tokenize, policy.stop_ids)
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
        accelerator = self.trainer.accelerator
        self.accelerator = accelerator
        self.commands = Commands(accelerator)
        self.rank, self.world = int(accelerator.process_index), int(accelerator.num_processes)
        self.train_model = self.model
        self.prepared = accelerator.distributed_type != DistributedType.NO
        self.sharded = self.prepared and _shards_parameters(accelerator)
        if self.sharded and self._sync is None:
            raise ConfigError(
                "trainer 'grpo': this launch shards the model's parameters (DeepSpeed ZeRO-3 or "
                "FSDP), so the transformers backend cannot generate with them; select backend "
                "vllm or vllm-server (weights gathered and pushed after each update)")
        if self.prepared:  # DDP / DeepSpeed / FSDP wrapper; self.model stays the plain module
            self.train_model, self.optimizer = accelerator.prepare(self.model, self.optimizer)
        self.model.eval()
        self._torch = torch
        self._merged = False
        self._merge_adapter()
        #: Asynchronous training: the policy version of the current weights, and the trainable
        #: weights of the last versions by version (:meth:`keep_version`).
        self.policy_version: int | None = None
        self._snapshots: dict[int, list[Any]] = {}

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
        from spade_core.distributed import launch_info

        path = resolve_model(spec or DEFAULT_MODEL).path
        cuda = torch.cuda.is_available()
        model = AutoModelForCausalLM.from_pretrained(
            path, dtype=torch.bfloat16 if cuda else torch.float32)
        return model.to(f"cuda:{launch_info().local_rank}" if cuda else "cpu")

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

    def _importance_weights(self, batches: list[list[EncodedSample]],
                            tensors: dict[int, dict[str, Any]]) -> dict[str, float]:
        """Truncated importance sampling: in each micro-batch holding a row generated by an
        older policy, the advantages become per-token, the row's multiplied by
        ``clamp(exp(logp_now - logp_behaviour), low, high)`` (the others unchanged). ``logp_now``
        is the policy's before this update, as Slime's TIS takes the training engine's old
        log-probs; ``logp_behaviour`` comes from :meth:`_behaviour_logps`. Returns the weights'
        mean, the share at a clamp bound, and where the generation backend's log-probabilities
        are known besides the trainer's, their mean absolute difference (``tis_engine_gap``:
        the engine against the trainer, a diagnostic)."""
        torch = self._torch
        o = self.options
        weights: list[float] = []
        gaps: list[float] = []
        clamped = 0
        for index, t in tensors.items():
            rows = batches[index]
            if not any(r.rollout_logps is not None or self._versioned(r) for r in rows):
                continue
            before = t.get("old_per_token_logps")  # already computed for several steps
            now = (before if before is not None else self._logps(t, reference=False)
                   ).float().cpu()
            behaviour = self._behaviour_logps(rows, t, now)
            advantages = t["advantages"].detach().cpu().unsqueeze(1).repeat(1, now.size(1))
            for k, row in enumerate(rows):
                then = behaviour[k]
                if then is None:
                    continue
                length = min(len(then), now.size(1))
                w = tis_weights(now[k, :length].tolist(), then[:length],
                                o.tis_clip_low, o.tis_clip_high)
                mine = [v for v, m in zip(w, row.env_mask[:length]) if m]
                weights += mine
                clamped += sum(1 for v in mine if v in (o.tis_clip_low, o.tis_clip_high))
                advantages[k, :length] *= torch.tensor(w)
                if then is not row.rollout_logps and row.rollout_logps is not None:
                    gaps += [abs(a - b) for a, b, m in zip(row.rollout_logps, then, row.env_mask)
                             if m and not math.isnan(a) and not math.isnan(b)]
            t["advantages"] = advantages.to(t["advantages"].device)
        if not weights:
            return {}
        found = {"tis_mean_weight": sum(weights) / len(weights),
                 "tis_clipped_share": clamped / len(weights), "tis_tokens": float(len(weights))}
        if gaps:
            found["tis_engine_gap"] = sum(gaps) / len(gaps)
        return found

    def _versioned(self, row: EncodedSample) -> bool:
        """Whether a row generated asynchronously gets its behaviour log-probabilities here."""
        return row.token_versions is not None and self.policy_version in self._snapshots

    def _behaviour_logps(self, rows: list[EncodedSample], batch: dict[str, Any],
                         now: Any) -> list[list[float] | None]:
        """Per row, the per-token log-probabilities of the policy that generated it (``None``:
        on-policy, nothing to correct). A row generated asynchronously (``token_versions``) gets,
        per token, those under the kept weights of the version that generated the token
        (:meth:`keep_version`), computed on this same micro-batch as ``now``, so that weights
        that did not move give the same figures bit for bit; a version no longer kept falls
        back to the backend's. Any other row keeps what was recorded (``rollout_logps``: a
        window's designs, by :meth:`record_logprobs`)."""
        under: dict[int, Any] = {}
        found: list[list[float] | None] = []
        for k, row in enumerate(rows):
            if not self._versioned(row):
                found.append(row.rollout_logps)
                continue
            mine = now[k].tolist()
            engine = row.rollout_logps or []
            values = []
            for j, version in enumerate(row.token_versions[:len(mine)]):  # type: ignore[index]
                if version == self.policy_version:
                    values.append(mine[j])
                elif version in self._snapshots:
                    if version not in under:
                        under[version] = self._logps_under(version, batch)
                    values.append(float(under[version][k, j]))
                else:
                    values.append(engine[j] if j < len(engine) else float("nan"))
            found.append(values)
        return found

    def _logps_under(self, version: int, batch: dict[str, Any]) -> Any:
        """Log-probs of ``batch`` with the weights kept for ``version``; the current ones are
        put back afterwards (they are the kept ones of :attr:`policy_version`)."""
        torch = self._torch
        with torch.no_grad():
            for parameter, kept in zip(self.params, self._snapshots[version]):
                parameter.copy_(kept)
        try:
            return self._logps(batch, reference=False).float().cpu()
        finally:
            with torch.no_grad():
                for parameter, kept in zip(self.params, self._snapshots[self.policy_version]):
                    parameter.copy_(kept)

    def keep_version(self, version: int, level: int) -> None:
        """Keep the trainable weights as policy ``version`` (the LoRA adapter, or every weight
        under full fine-tuning) and drop those more than ``level`` versions older: at most
        ``level + 1`` copies, on the weights' device. Under a launch that shards the parameters
        none are kept (the backend's log-probabilities stand in)."""
        self.commands.send(Command("keep", (version, level)))
        self._keep_here(version, level)

    def _keep_here(self, version: int, level: int) -> None:
        self.policy_version = version
        if self.sharded:
            return
        self._snapshots[version] = [p.detach().clone() for p in self.params]
        for old in [v for v in self._snapshots if v < version - level]:
            del self._snapshots[old]

    def record_logprobs(self, samples: Sequence[TrainingSample]) -> list[list[float] | None]:
        """Per-token log-probabilities of each sample's completion under the current policy, as
        training will encode it (``None`` for a sample that cannot be encoded): recorded when the
        samples are generated, so that training them later can correct for the policy's moves."""
        found: list[list[float] | None] = []
        for sample in samples:
            rows, _ = encode_samples([sample], self.encoder, self.options.max_tokens)
            if not rows:
                found.append(None)
                continue
            batch = collate(rows, self.pad_id, self.device)
            found.append([float(v) for v in self._logps(batch, reference=False)[0].float()
                          .cpu().tolist()][:len(rows[0].completion_ids)])
        return found

    def train(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
        """One GRPO update on an iteration's samples; returns loss, rewards and TRL's figures."""
        self.commands.send(Command("train", (list(samples),)))
        return self._train_here(samples)

    def follow(self) -> None:
        """Replay rank 0's calls on this rank until it closes the trainer."""
        while True:
            command = self.commands.receive()
            if command.name == "stop":
                return
            if command.name == "train":
                self._train_here(*command.args)
            elif command.name == "save":
                self._save_here(*command.args)
            elif command.name == "load":
                self._load_here(*command.args)
            elif command.name == "keep":
                self._keep_here(*command.args)
            else:
                raise RuntimeError(f"rank {self.rank}: unknown trainer command {command.name!r}")

    def _train_here(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
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
                           {Role.AGENT: o.agent_scale, Role.DESIGNER: o.designer_scale})
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
        shards = shard_steps(len(batches), o.gradient_accumulation_steps or len(batches),
                             self.rank, self.world)
        tensors = {i: collate(batches[i], self.pad_id, self.device)
                   for shard in shards for i in shard.batches}
        for shard in shards:  # zero-weight stand-in for a rank with no micro-batch in a step
            if not shard.batches:
                tensors.setdefault(shard.first, collate(batches[shard.first], self.pad_id,
                                                        self.device))
        tokens = [sum(float(sum(r.env_mask)) for i in shard.step for r in batches[i])
                  for shard in shards]
        steps = len(shards) * o.num_iterations
        if steps > 1:  # later steps see an updated policy: keep the sampling policy's log-probs
            for t in tensors.values():
                t["old_per_token_logps"] = self._logps(t, reference=False)
        if o.beta > 0:
            for t in tensors.values():
                t["ref_per_token_logps"] = self._logps(t, reference=True)
        if o.tis:
            metrics.update(self._importance_weights(batches, tensors))
        losses, norms = self._optimize(shards, tensors, tokens)
        self.model.eval()
        if self._sync is not None:
            pushed = time.perf_counter()
            self._push_weights()
            metrics["push_seconds"] = time.perf_counter() - pushed
        metrics.update(loss=sum(losses) / len(losses), grad_norm=sum(norms) / len(norms),
                       optimizer_steps=float(len(losses)),
                       mean_abs_advantage=sum(abs(r.advantage) for r in useful) / len(useful))
        for name, values in self.trainer._metrics["train"].items():
            if values:
                metrics[f"trl/{name}"] = float(sum(values) / len(values))
        self.trainer._metrics["train"].clear()
        metrics["seconds"] = time.perf_counter() - started
        return metrics

    def _optimize(self, shards: list[StepShard], tensors: dict[int, dict[str, Any]],
                  tokens: list[float]) -> tuple[list[float], list[float]]:
        """Optimizer steps over this rank's shards. Each micro-batch's loss is TRL's with the
        whole step's normaliser (``current_gradient_accumulation_steps`` and the trained tokens of
        every rank), scaled so that the ranks' averaged gradients equal one process's summed
        ones; a rank short of micro-batches runs one with zero weight so every rank runs as many
        passes (DDP and DeepSpeed reduce gradients on each rank's last pass)."""
        torch = self._torch
        trainer, model, accelerator = self.trainer, self.train_model, self.accelerator
        steps_per_generation = trainer.args.steps_per_generation or 1
        # TRL's token-normalised losses already divide by the process count; the others do not.
        scale = 1.0 if self.options.loss_type == "dapo" else float(self.world)
        losses: list[float] = []
        norms: list[float] = []
        model.train()
        for _ in range(self.options.num_iterations):
            for shard, step_tokens in zip(shards, tokens):
                trainer.current_gradient_accumulation_steps = shard.step_size
                passes = [(tensors[i], scale) for i in shard.batches]
                filler = tensors[shard.batches[0] if shard.batches else shard.first]
                passes += [(filler, 0.0)] * shard.padding
                step_loss = 0.0
                for k, (t, weight) in enumerate(passes):
                    last = k == len(passes) - 1
                    inputs = dict(t)
                    inputs["num_items_in_batch"] = torch.tensor(
                        step_tokens * steps_per_generation / shard.step_size, device=self.device)
                    # DeepSpeed reads the accumulation boundary from accelerate's sync flag;
                    # DDP and FSDP skip the all-reduce inside no_sync.
                    accelerator.gradient_state._set_sync_gradients(last)
                    with contextlib.ExitStack() as stack:
                        if not last:
                            stack.enter_context(accelerator.no_sync(model))
                        with trainer.compute_loss_context_manager(), self._local_metrics():
                            loss = trainer.compute_loss(model, inputs) * weight
                        accelerator.backward(loss)
                    step_loss += float(loss.detach()) / self.world  # each pass counts world-fold
                accelerator.gradient_state._set_sync_gradients(True)
                norm = self._clip()
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.optimizer_steps += 1
                losses.append(self._sum_over_ranks(step_loss))
                norms.append(norm)
        return losses, norms

    @contextlib.contextmanager
    def _local_metrics(self) -> Any:
        """TRL's ``compute_loss`` gathers per-sequence metrics (clip ratios) from every rank, which
        needs micro-batches of one size everywhere; a step's shards can differ in size, so under
        several processes those gathers stay local (rank 0 reports its own). Gradients are
        reduced by the prepared model, not by these gathers."""
        if self.world == 1:
            yield
            return
        trainer = self.trainer
        trainer.accelerator = _LocalGather(self.accelerator)
        try:
            yield
        finally:
            trainer.accelerator = self.accelerator

    def _clip(self) -> float:
        norm = self.accelerator.clip_grad_norm_(self.params, self.options.max_grad_norm)
        return float(norm) if norm is not None else float("nan")

    def _sum_over_ranks(self, value: float) -> float:
        if self.world == 1:
            return value
        tensor = self._torch.tensor([value], dtype=self._torch.float64, device=self.device)
        return float(self.accelerator.reduce(tensor, reduction="sum")[0])

    def _push_weights(self) -> None:
        """Send the updated weights to a backend that holds its own copy (vLLM). Under a sharded
        launch every rank takes part in gathering them; rank 0 sends."""
        model = self.model
        merged = hasattr(model, "merge_adapter") and not self._merged and not self.sharded
        if merged:
            model.merge_adapter()
        try:
            state = (self.accelerator.get_state_dict(self.train_model) if self.sharded
                     else model.state_dict())
            if self.rank != 0:
                return
            named = []
            for name, tensor in state.items():
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
        """Model weights (or the LoRA adapter), optimizer state and counters under ``directory``
        (rank 0 writes; under a sharded launch every rank writes its shard through accelerate)."""
        self.commands.send(Command("save", (directory,)))
        self._save_here(directory)

    def _save_here(self, directory: Path) -> None:
        from safetensors.torch import save_model

        if self.rank == 0:
            directory.mkdir(parents=True, exist_ok=True)
        if self.sharded:
            self.accelerator.save_state(str(directory / "accelerate"))
        elif self.rank == 0:
            if hasattr(self.model, "peft_config"):
                self.model.save_pretrained(str(directory / "adapter"))
            else:
                save_model(self.model, str(directory / "model.safetensors"))
                self.model.config.save_pretrained(str(directory))
            self._torch.save(self.optimizer.state_dict(), directory / "optimizer.pt")
        if self.rank == 0:
            (directory / "trainer_state.json").write_text(json.dumps({
                "trained_iterations": self.trained_iterations,
                "optimizer_steps": self.optimizer_steps, "world_size": self.world}))
        if self.world > 1:
            self.accelerator.wait_for_everyone()  # the checkpoint is whole before the loop goes on

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote, into the same module the backend generates with. A
        checkpoint taken with N processes resumes under any number of processes (the weights and
        the optimizer state are whole; a sharded launch's checkpoint needs the same launch)."""
        self.commands.send(Command("load", (directory,)))
        self._load_here(directory)

    def _load_here(self, directory: Path) -> None:
        from safetensors.torch import load_file, load_model

        torch = self._torch
        if self.sharded:
            self.accelerator.load_state(str(directory / "accelerate"))
        elif hasattr(self.model, "peft_config"):
            from peft import set_peft_model_state_dict

            self._unmerge_adapter()
            weights = load_file(str(directory / "adapter" / "adapter_model.safetensors"))
            result = set_peft_model_state_dict(self.model, weights)
            unexpected = getattr(result, "unexpected_keys", [])
            if unexpected:
                raise ConfigError(f"{directory}: adapter does not fit this model ({unexpected[:3]})")
        else:
            load_model(self.model, str(directory / "model.safetensors"), strict=True)
        if not self.sharded:
            state = torch.load(directory / "optimizer.pt", map_location=self.device,
                               weights_only=True)
            self.optimizer.load_state_dict(state)
        counters = json.loads((directory / "trainer_state.json").read_text())
        self.trained_iterations = int(counters["trained_iterations"])
        self.optimizer_steps = int(counters["optimizer_steps"])
        self._merge_adapter()
        if self._sync is not None:
            self._push_weights()

    def close(self) -> None:
        """On rank 0, release the followers (their ``follow`` returns); then drop the trainer."""
        if self.rank == 0 and self.trainer is not None:
            self.commands.send(Command("stop"))
        self.trainer = None  # type: ignore[assignment]


class _LocalGather:
    """The trainer's accelerator, except that ``gather`` returns this rank's tensor."""

    def __init__(self, accelerator: Any) -> None:
        self._accelerator = accelerator

    def gather(self, tensor: Any) -> Any:
        return tensor

    def gather_for_metrics(self, tensor: Any, *args: Any, **kwargs: Any) -> Any:
        return tensor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._accelerator, name)


def _shards_parameters(accelerator: Any) -> bool:
    """True when the launch splits parameters over ranks (ZeRO-3, FSDP full/hybrid sharding), so
    no single rank holds a whole module to generate with."""
    from accelerate.utils import DistributedType

    kind = accelerator.distributed_type
    if kind == DistributedType.DEEPSPEED:
        plugin = accelerator.state.deepspeed_plugin
        return int(getattr(plugin, "zero_stage", 0) or 0) >= 3
    if kind == DistributedType.FSDP:
        plugin = accelerator.state.fsdp_plugin
        strategy = str(getattr(plugin, "sharding_strategy", "") or getattr(
            plugin, "reshard_after_forward", ""))
        return "NO_SHARD" not in strategy
    return False


def build_grpo(options: GRPOOptions, context: Any) -> GRPOTraining:
    """Factory: needs the run's generation backend (built before the trainer)."""
    backend = context.components.get("generation_backend")
    if backend is None:
        raise ConfigError("trainer 'grpo' needs the run's generation backend; none was built")
    return GRPOTraining(options, backend, context.model, context.seed, context.run_dir)


__all__ = ["GRPOTraining", "build_grpo", "loop_reward", "EncodedSample"]
