"""The base class each component kind implements, one small module per kind.

Each base class (like ``gymnasium.Env``) declares the required methods as abstract and gives every
optional capability a working default, so the loop calls every method unconditionally and a
plugin that can do better simply overrides. A component subclasses its kind's base class (a
component that does not is refused when it is built, as ``gymnasium.utils.env_checker`` refuses an
env that is not a ``gymnasium.Env``). ``docs/plugins.md`` lists each base class's required and optional members.
"""

from spade_core.interfaces.backend import (
    Generation,
    GenerationBackend,
    TrainableBackend,
    TrainablePolicy,
)
from spade_core.interfaces.corpus import CorpusSampler
from spade_core.interfaces.estimator import (
    ESTIMATOR_INTERFACE_VERSION,
    DifficultyEstimator,
    EstimateInput,
)
from spade_core.interfaces.eval_suite import EvalItem, EvalSettings, EvalSuite
from spade_core.interfaces.export_format import ExportFormat
from spade_core.interfaces.family import EnvFamily
from spade_core.interfaces.memory import EnvMemory
from spade_core.interfaces.prompts import NoProgram, PromptExamples, PromptStrategy
from spade_core.interfaces.sandbox import Sandbox, SandboxSession
from spade_core.interfaces.trainer import Trainer, TrainingSample
from spade_core.records import EnvIteration, EnvRecord

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
    "NoProgram",
    "PromptExamples",
    "PromptStrategy",
    "Sandbox",
    "SandboxSession",
    "Trainer",
    "TrainableBackend",
    "TrainablePolicy",
    "TrainingSample",
]
