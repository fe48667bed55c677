"""Options of the ``grpo`` trainer (config section ``trainer.options``); see docs/training.md."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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

    learning_rate: float = Field(default=1e-6, gt=0.0, description="AdamW learning rate")
    weight_decay: float = Field(default=0.0, ge=0.0)
    max_grad_norm: float = Field(default=1.0, gt=0.0, description="gradient clipping norm")
    clip_low: float = Field(default=0.2, gt=0.0, lt=1.0,
                            description="lower clip range of the importance ratio (TRL epsilon)")
    clip_high: float = Field(default=0.28, gt=0.0,
                             description="upper clip range (TRL epsilon_high; DAPO clip-higher)")
    kl_coef: float = Field(default=0.0, ge=0.0,
                           description="KL penalty to the initial model (TRL beta); 0 skips it")
    loss_type: Literal["dapo", "grpo", "bnpo", "dr_grpo"] = Field(
        default="dapo", description="TRL loss aggregation: dapo = token mean over the step")
    scale_rewards: Literal["none", "group", "role"] = Field(
        default="none", description="divide advantages by the reward std of the baseline set "
                                    "(group) or of the whole role (role); none as the reference")
    agent_baseline: Literal["group", "role"] = Field(
        default="group", description="agent advantage baseline: mean of the same environment's "
                                     "episodes (group) or of all agent samples (role)")
    designer_baseline: Literal["group", "role"] = Field(
        default="role", description="designer advantage baseline: all designer samples of the "
                                    "iteration (role) or the attempts of one proposal (group)")
    micro_batch_size: int = Field(default=4, ge=1, description="sequences per forward/backward")
    gradient_accumulation_steps: int | None = Field(
        default=None, ge=1, description="micro-batches per optimizer step; None: one step over "
                                        "all of an iteration's samples")
    epochs: int = Field(default=1, ge=1, description="passes over an iteration's samples")
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
