"""The ``lab-grounded`` estimator: SOAR's grounded teacher reward (Teaching Models to Teach
Themselves, 2026) in the lab, where it is exact and cheap.

SOAR rewards the teacher by the student's measured improvement on a set of hard problems after
training on the teacher's problems. Here: a copy of the simulated learner takes the update the
lab trainer would take on this environment's own unhinted episodes (their actions, their
rewards, the agent's group-normalised advantages), and the designer's reward is ``scale`` times
the change of the expected success on the reference set (``reference_difficulties``, every
skill), exactly. In a real run the same reward costs one trial update of the policy per
environment plus an evaluation on the reference set before and after (docs/estimators.md)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from plugins.lab.learner import Cell
from plugins.lab.programs import cell_of_program
from plugins.lab.suite import lab_backend
from plugins.trainers.grpo_rows import EncodedSample, compute_advantages
from spade_core.interfaces import DifficultyEstimator, EstimateInput
from spade_core.records import Difficulty, Role


class GroundedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scale: float = Field(default=100.0, gt=0.0, description="designer reward per unit of "
                         "expected success gained on the reference set")


def grounded_gain(learner: Any, cell: Cell, actions: list[str], rewards: list[float]) -> float:
    """Expected success gained on the reference set by one agent update of a copy of
    ``learner`` on these episodes (advantages: z-scores within the group, as the agent's)."""
    rows = [EncodedSample(role=Role.AGENT, group="env", reward=r, prompt_ids=[],
                          completion_ids=[], env_mask=[]) for r in rewards]
    compute_advantages(rows, {Role.AGENT: "group"}, {Role.AGENT: "group"})
    trial = copy.deepcopy(learner)
    refs = learner.params.reference_difficulties
    before = trial.heldout(refs)
    trial.agent_update([(cell, a, False, row.advantage)
                        for a, row in zip(actions, rows, strict=True)])
    return trial.heldout(refs) - before


class Grounded(DifficultyEstimator):
    """Reads the lab backend's learner. The estimator is built before the backend, so it is
    looked up in the run's live ``components`` when first needed."""

    def __init__(self, options: GroundedOptions, components: Mapping[str, Any]) -> None:
        self.options = options
        self._components = components
        self._backend: Any = None

    @property
    def backend(self) -> Any:
        if self._backend is None:
            self._backend = lab_backend(self._components.get("generation_backend"))
        return self._backend

    def estimate(self, data: EstimateInput) -> Difficulty:
        hinted, unhinted = list(data.hinted), list(data.pooled_unhinted)
        h = sum(hinted) / len(hinted) if hinted else 0.0
        u = sum(unhinted) / len(unhinted) if unhinted else 0.0
        figures = {"hinted_mean": h, "unhinted_mean": u, "gain": 0.0}  # regret: the loop's
        cell = cell_of_program(data.env.source)
        nonce = _nonce(data.env.source)
        actions = list(self.backend.actions.get(nonce, ()))[-len(unhinted):] if unhinted else []
        if cell is not None and len(actions) == len(unhinted) and unhinted:
            figures["gain"] = grounded_gain(self.backend.learner, cell, actions, unhinted)
        return Difficulty(figures=figures, designer_reward=self.options.scale * figures["gain"])


def _nonce(source: str) -> int:
    for line in source.splitlines():
        if line.strip().startswith("NONCE = "):
            return int(line.split("=", 1)[1])
    return -1
