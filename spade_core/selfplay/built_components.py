"""The built components a run plays with, as every step of an iteration receives them (built by
:func:`~spade_core.selfplay.setup.build_components`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from spade_core.interfaces import (
    CorpusSampler,
    DifficultyEstimator,
    EnvFamily,
    EnvMemory,
    GenerationBackend,
    PromptStrategy,
    Sandbox,
    Trainer,
)
from spade_core.selfplay.validator import LLMValidator
from spade_core.validation import ValidationOptions


@dataclass
class Components:
    """The built components a run plays with."""

    corpus: CorpusSampler
    designer: PromptStrategy
    families: list[EnvFamily]
    sandbox: Sandbox
    estimator: DifficultyEstimator
    memory: EnvMemory
    backend: GenerationBackend
    trainer: Trainer
    #: How proposals are validated (config ``validation`` and ``loop.success_threshold``).
    validation: ValidationOptions = field(default_factory=ValidationOptions)
    #: Writes the hints (config ``hints.backend``); ``None``: the policy (``backend``).
    hint_backend: GenerationBackend | None = None
    #: ``family``: each family's hint instructions; ``single``: one prompt for all (``hints``).
    hint_prompt: str = "family"
    #: The optional LLM validator (``validation.llm``); ``None``: off.
    llm_validator: LLMValidator | None = None
    #: The estimator as errors name it: registered name, plugin and distribution ("": its class).
    estimator_label: str = ""
