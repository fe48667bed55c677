"""The ``lab-grid`` held-out suite: the agent's expected unhinted success on a fixed grid of
(skill, difficulty) cells, computed from the simulated learner's abilities (no sampling).

The eval summary counts successes (pass@1 = successes / plays), so each cell is reported as
``resolution`` virtual plays of which ``round(p * resolution)`` succeed: pass@1 equals the exact
expected success to within ``0.5 / resolution``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from plugins.lab.lab_backend import LabBackend
from spade_core.errors import ConfigError
from spade_core.interfaces import EvalItem, EvalSettings, EvalSuite, GenerationBackend


class LabGridOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resolution: int = Field(default=1000, ge=1, le=100_000,
                            description="virtual plays per cell (pass@1 to within 0.5/resolution)")


def lab_backend(backend: Any) -> LabBackend:
    """The :class:`LabBackend` under the wrappers the loop puts around a backend."""
    seen = 0
    while not isinstance(backend, LabBackend) and seen < 8:
        inner = backend.__dict__.get("backend") if hasattr(backend, "__dict__") else None
        if inner is None:
            break
        backend, seen = inner, seen + 1
    if not isinstance(backend, LabBackend):
        raise ConfigError(f"eval suite 'lab-grid' measures the simulated learner of backend "
                          f"'lab'; this run's backend is {type(backend).__name__} (docs/lab.md)")
    return backend


class LabGridSuite(EvalSuite):
    name = "lab-grid"
    scores_in_process = True

    def __init__(self, options: LabGridOptions) -> None:
        self.options = options

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        # One item, the whole grid: its cells come from the learner's parameters
        # (``heldout_difficulties`` at every skill) when it is played.
        return [EvalItem(id="grid", bucket="grid")]

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        learner = lab_backend(backend).learner
        out = []
        n = self.options.resolution
        for _ in items:
            p = learner.heldout()
            wins = round(p * n)
            out.append([1.0] * wins + [0.0] * (n - wins))
        return out


