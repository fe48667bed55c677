"""The interface each component kind implements, one small module per kind.

Plugins implement these Protocols (structural typing: no base class to import). The loop only ever
talks to components through them, so a plugin can be swapped by changing one config key.
"""

from spade_core.interfaces.backend import Generation, GenerationBackend
from spade_core.interfaces.corpus import CorpusSampler
from spade_core.interfaces.estimator import DifficultyEstimator
from spade_core.interfaces.family import EnvFamily
from spade_core.interfaces.memory import EnvMemory, EnvRecord
from spade_core.interfaces.prompts import PromptExamples, PromptStrategy
from spade_core.interfaces.sandbox import Sandbox, SandboxSession
from spade_core.interfaces.trainer import Trainer, TrainingSample

__all__ = [
    "CorpusSampler",
    "DifficultyEstimator",
    "EnvFamily",
    "EnvMemory",
    "EnvRecord",
    "Generation",
    "GenerationBackend",
    "PromptExamples",
    "PromptStrategy",
    "Sandbox",
    "SandboxSession",
    "Trainer",
    "TrainingSample",
]
