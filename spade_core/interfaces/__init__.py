"""The base class each component kind implements, one small module per kind.

Each base class (like ``gymnasium.Env``) declares the required methods as abstract and gives every
optional capability a working default, so the loop calls every method unconditionally and a
plugin that can do better simply overrides. A component that follows an interface without
subclassing it is accepted and wrapped (:func:`conform`); the documented contract is the base
class. ``docs/plugins.md`` lists each base class's required and optional members.
"""

from spade_core.interfaces.backend import (
    Generation,
    GenerationBackend,
    TrainableBackend,
    TrainablePolicy,
)
from spade_core.interfaces.conform import conform
from spade_core.interfaces.corpus import CorpusSampler
from spade_core.interfaces.estimator import (
    ESTIMATOR_INTERFACE_VERSION,
    DifficultyEstimator,
    EstimateInput,
)
from spade_core.interfaces.eval_suite import EvalItem, EvalSettings, EvalSuite
from spade_core.interfaces.export_format import ExportFormat
from spade_core.interfaces.family import EnvFamily
from spade_core.interfaces.memory import EnvIteration, EnvMemory, EnvRecord
from spade_core.interfaces.prompts import PromptExamples, PromptStrategy
from spade_core.interfaces.sandbox import Sandbox, SandboxSession
from spade_core.interfaces.trainer import Trainer, TrainingSample

#: The base class of each component kind (the kinds of ``spade_core.components.KINDS``).
BASES: dict[str, type] = {
    "corpus_sampler": CorpusSampler,
    "prompt_strategy": PromptStrategy,
    "env_family": EnvFamily,
    "sandbox": Sandbox,
    "difficulty_estimator": DifficultyEstimator,
    "env_memory": EnvMemory,
    "generation_backend": GenerationBackend,
    "trainer": Trainer,
    "eval_suite": EvalSuite,
    "export_format": ExportFormat,
}

__all__ = [
    "BASES",
    "ESTIMATOR_INTERFACE_VERSION",
    "CorpusSampler",
    "DifficultyEstimator",
    "EnvFamily",
    "EnvIteration",
    "EnvMemory",
    "EnvRecord",
    "EstimateInput",
    "EvalItem",
    "EvalSettings",
    "EvalSuite",
    "ExportFormat",
    "Generation",
    "GenerationBackend",
    "PromptExamples",
    "PromptStrategy",
    "Sandbox",
    "SandboxSession",
    "Trainer",
    "TrainableBackend",
    "TrainablePolicy",
    "TrainingSample",
    "conform",
]
