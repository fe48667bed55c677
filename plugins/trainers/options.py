"""Options of the ``grpo`` trainer (config section ``trainer.options``); see docs/training.md.

Options that TRL's ``GRPOConfig`` also has carry TRL's names (``epsilon``, ``beta``,
``per_device_train_batch_size``, ...), and only those. ``grpo_config`` passes any other
``GRPOConfig`` field through; it is checked against TRL's own fields when the config
is checked and when the trainer is built (``plugins/trainers/grpo_preflight.py``), never at import.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
#: ``GRPOConfig`` fields the trainer sets itself (from the options above, or because its own loop
#: replaces TRL's), which ``grpo_config`` may therefore not set.
TRAINER_SET: frozenset[str] = frozenset({
    "output_dir", "use_cpu", "bf16", "learning_rate", "weight_decay", "max_grad_norm", "epsilon",
    "epsilon_high", "beta", "loss_type", "temperature", "activation_checkpointing",
    "gradient_checkpointing", "seed", "per_device_train_batch_size", "num_generations",
    "gradient_accumulation_steps", "report_to", "save_strategy", "logging_strategy",
    "disable_dropout", "num_iterations", "scale_rewards",
})


class LoraOptions(BaseModel):
    """A LoRA adapter through peft instead of full fine-tuning."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(default=8, ge=1, description="adapter rank")
    alpha: int = Field(default=16, ge=1, description="LoRA scaling numerator (lora_alpha)")
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0, description="dropout on the adapter input")
    target_modules: list[str] | str = Field(
        default="all-linear", description="module names to adapt, or all-linear")
    merge_for_generation: bool = Field(
        default=True, description="fold the adapter into the base weights between updates, so "
                                  "generation pays nothing for it (unfolded for each update)")


class GRPOOptions(BaseModel):
    """One policy, two roles, GRPO on the loop's already generated and rewarded samples."""

    model_config = ConfigDict(extra="forbid")

    learning_rate: float = Field(default=1e-6, ge=0.0, description="AdamW learning rate (0: the "
                                 "weights never move, a check of the importance weights)")
    weight_decay: float = Field(default=0.0, ge=0.0)
    max_grad_norm: float = Field(default=1.0, gt=0.0, description="gradient clipping norm")
    epsilon: float = Field(default=0.2, gt=0.0, lt=1.0,
                           description="lower clip range of the importance ratio")
    epsilon_high: float = Field(default=0.28, gt=0.0,
                                description="upper clip range (DAPO clip-higher; was clip_high)")
    beta: float = Field(default=0.0, ge=0.0,
                        description="KL penalty to the initial model; 0 skips it")
    loss_type: Literal["dapo", "grpo", "bnpo", "dr_grpo"] = Field(
        default="dapo", description="TRL loss aggregation: dapo = token mean over the step")
    agent_baseline: Literal["group", "role"] = Field(
        default="group", description="agent advantage baseline: mean of the same environment's "
                                     "episodes in the iteration (group, the reference's per-game "
                                     "baseline) or of all agent samples (role)")
    agent_scale: Literal["group", "role", "none"] = Field(
        default="group", description="divide agent advantages by the population reward std of "
                                     "the baseline set (group: the reference's per-game z-score, "
                                     "+1e-8), of all agent samples (role), or not (none)")
    designer_baseline: Literal["skill", "group", "role"] = Field(
        default="skill", description="designer advantage baseline: the mean reward of the "
                                     "iteration's designs of the same skill (skill, the "
                                     "reference's centring), of one proposal's attempts (group) "
                                     "or of all designer samples (role)")
    designer_scale: Literal["none", "group", "role"] = Field(
        default="none", description="divide designer advantages by a reward std (none, as the "
                                    "reference: centring only, then env_reward_scale)")
    tis: bool = Field(default=True, description="truncated importance sampling for samples that "
                                                "carry the log-probs they were generated with "
                                                "(delayed designer samples), as --use-tis")
    tis_clip_low: float = Field(default=0.0, ge=0.0, description="lower clamp of the per-token "
                                                                 "TIS weight")
    tis_clip_high: float = Field(default=2.0, gt=0.0, description="upper clamp of the per-token "
                                                                  "TIS weight (Slime's default)")
    per_device_train_batch_size: int = Field(
        default=4, ge=1,
        description="sequences per forward/backward")
    gradient_accumulation_steps: int | None = Field(
        default=None, ge=1, description="micro-batches per optimizer step; None: one step over "
                                        "all of an iteration's samples")
    num_iterations: int = Field(default=1, ge=1,
                                description="passes over an iteration's samples")
    max_tokens: int = Field(default=2048, ge=32,
                            description="prompt + completion tokens per sample; longer "
                                        "completions are cut, longer prompts skipped")
    max_samples: int | None = Field(
        default=None, ge=1, description="at most this many samples per role and iteration "
                                        "(a seeded random subset of those with a non-zero "
                                        "advantage, computed on all samples); None trains on "
                                        "all")
    temperature: float = Field(default=0.8, gt=0.0,
                               description="sampling temperature the log-probs are taken at; "
                                           "match loop.agent_temperature / designer_temperature")
    train_designer: bool = Field(default=True, description="train on designer samples at all")
    designer_delay_iterations: int = Field(
        default=0, ge=0, description="skip designer updates for the first N trained iterations")
    lora: LoraOptions | None = Field(default=None, description="train a LoRA adapter (peft)")
    bf16: bool = Field(default=False, description="bfloat16 autocast; on by choice on GPUs (on "
                                                  "this 2-core CPU it made LoRA steps slower)")
    gradient_checkpointing: bool = Field(default=False,
                                         description="trade compute for activation memory")
    model: str | None = Field(
        default=None, description="model to train when the backend cannot share its module "
                                  "(vllm); None uses the run's model.path")
    grpo_config: dict[str, Any] = Field(
        default_factory=dict,
        description="further trl.GRPOConfig fields, passed as they are (checked against TRL's "
                    "fields at config check and build time)")
