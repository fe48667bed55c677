"""The ``lab`` trainer: the loop's samples and advantages turned into the simulated learner's
policy-gradient update (plugins/lab/learner.py), with the GRPO trainer's own advantage code
(``compute_advantages``: per-role baselines and scales, ``advantage_scale``) and its truncated
importance weights (``tis_weights``) for designs generated under an older policy."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from plugins.lab import memory_designer
from plugins.lab.lab_backend import LabBackend
from plugins.lab.memory_designer import read_examples
from plugins.lab.learner import Cell
from plugins.lab.programs import cell_of_program, read_task
from plugins.trainers.grpo_rows import EncodedSample, compute_advantages, tis_weights
from spade_core.errors import ConfigError
from spade_core.interfaces import Trainer, TrainingSample
from spade_core.records import Role


class LabTrainerOptions(BaseModel):
    """``trainer.options`` of ``lab``: the GRPO trainer's advantage settings (same names and
    defaults) and its per-role sample cap."""

    model_config = ConfigDict(extra="forbid")

    agent_baseline: Literal["group", "role"] = "group"
    agent_scale: Literal["group", "role", "none"] = "group"
    designer_baseline: Literal["skill", "group", "role"] = "skill"
    designer_scale: Literal["none", "group", "role"] = "none"
    max_samples: int | None = Field(default=None, ge=1, description="per role and update, a "
                                    "seeded random subset (the experiment budget sets it)")
    train_designer: bool = Field(default=True, description="false: the designer policy stays "
                                 "as it is (set for the random and RLVE designers)")


def entropy(policy: Sequence[float]) -> float:
    """Shannon entropy in nats of a distribution (0 for one certain choice, log n for uniform)."""
    return -sum(p * math.log(p) for p in policy if p > 0)


def _reply(sample: TrainingSample) -> str:
    return next((str(m.get("content", "")) for m in reversed(sample.messages)
                 if m.get("role") == "assistant"), "")


def _observation(sample: TrainingSample) -> str:
    return next((str(m.get("content", "")) for m in sample.messages if m.get("role") == "user"),
                "")


def agent_step(sample: TrainingSample) -> tuple[Cell, str, bool] | None:
    """The cell, the action (the reply's first word) and whether hinted, of an agent sample."""
    task = read_task(_observation(sample))
    if task is None:
        return None
    return task.cell, _reply(sample).split(":", 1)[0].strip(), task.hinted


def design_of(sample: TrainingSample) -> Cell | None:
    """The cell a designer sample's program declares."""
    return cell_of_program(_reply(sample))


class LabTrainer(Trainer):
    """Updates the :class:`~plugins.lab.lab_backend.LabBackend`'s learner in place."""

    def __init__(self, options: LabTrainerOptions, backend: object, seed: int = 0) -> None:
        inner = getattr(backend, "backend", backend)  # a VersionedBackend wraps it
        while not isinstance(inner, LabBackend) and hasattr(inner, "backend"):
            inner = inner.backend
        if not isinstance(inner, LabBackend):
            raise ConfigError(f"trainer 'lab': the generation backend is "
                              f"{type(backend).__name__}; the lab trainer updates the simulated "
                              "learner of backend 'lab' only (docs/lab.md)")
        self.options = options
        self.backend = inner
        self.learner = inner.learner
        self.rng = random.Random(seed * 31 + 5)
        self.updates = 0

    @property
    def reads_memory(self) -> bool:
        return self.backend.options.designer == "memory"

    def logprob(self, sample: TrainingSample, cell: Cell) -> float:
        """The log-probability of a design under the designer's policy now: the categorical
        policy's, or the memory-reading designer's given its prompt's examples (floor apart)."""
        if not self.reads_memory:
            return self.learner.logprob(cell)
        q = memory_designer.probability(self.learner, read_examples(sample.messages), cell)
        return math.log(max(q, 1e-300))

    def record_logprobs(self, samples: Sequence[TrainingSample]
                        ) -> list[list[float] | None] | None:
        out: list[list[float] | None] = []
        for sample in samples:
            cell = design_of(sample) if sample.role == Role.DESIGNER else None
            out.append([self.logprob(sample, cell)] if cell is not None else None)
        return out

    def _cap(self, samples: list[TrainingSample]) -> list[TrainingSample]:
        cap = self.options.max_samples
        if cap is None:
            return samples
        kept: list[TrainingSample] = []
        for role in (Role.DESIGNER, Role.AGENT):
            mine = [s for s in samples if s.role == role]
            kept += mine if len(mine) <= cap else self.rng.sample(mine, cap)
        return kept

    def train(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
        o = self.options
        samples = self._cap(list(samples))
        rows, parsed = [], []
        for sample in samples:
            what = agent_step(sample) if sample.role == Role.AGENT else design_of(sample)
            if what is None:
                continue
            rows.append(EncodedSample(
                role=sample.role, group=sample.group, reward=float(sample.reward), prompt_ids=[],
                completion_ids=[], env_mask=[], skill=str(sample.meta.get("skill") or ""),
                advantage_scale=float(sample.meta.get("advantage_scale", 1.0))))
            parsed.append((sample, what))
        compute_advantages(rows, {Role.AGENT: o.agent_baseline, Role.DESIGNER: o.designer_baseline},
                           {Role.AGENT: o.agent_scale, Role.DESIGNER: o.designer_scale})
        agent_batch, design_batch, weights = [], [], []
        for row, (sample, what) in zip(rows, parsed, strict=True):
            if row.role == Role.AGENT:
                cell, action, hinted = what
                agent_batch.append((cell, action, hinted, row.advantage))
            elif o.train_designer:
                weight = 1.0
                then = sample.meta.get("rollout_logps")
                if then:
                    weight = tis_weights([self.logprob(sample, what)], [float(then[0])])[0]
                weights.append(weight)
                design_batch.append((sample, what, row.advantage, weight))
        before = self.learner.heldout()
        self.learner.agent_update(agent_batch)
        if design_batch and self.reads_memory:
            memory_designer.update(self.learner, [(read_examples(sample.messages), cell, a, w)
                                                  for sample, cell, a, w in design_batch])
        elif design_batch:
            self.learner.designer_update([(cell, a, w) for _, cell, a, w in design_batch])
        self.backend.rlve_settle()
        self.updates += 1
        metrics = {"agent_samples": float(len(agent_batch)),
                   "designer_samples": float(len(design_batch)),
                   "optimizer_steps": 1.0,  # one update of the learner per iteration
                   "heldout_change": self.learner.heldout() - before,
                   "mean_ability": sum(self.learner.theta) / len(self.learner.theta)}
        if weights:
            metrics["tis_mean_weight"] = sum(weights) / len(weights)
        if o.train_designer:
            # What the lab's tables read (issue 47): did this update move the designer at all
            # (a group of refused duplicates has every advantage 0), and how spread its policy is.
            metrics["designer_nonzero_advantages"] = float(sum(1 for _, _, a, w in design_batch
                                                               if a and w))
            metrics["designer_entropy"] = entropy(self.learner.policy())
            if self.reads_memory:
                metrics["designer_edit_entropy"] = entropy(
                    memory_designer.softmax(self.learner.edit_logits))
        return metrics

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "lab.json").write_text(json.dumps(
            {"backend": self.backend.state_dict(), "updates": self.updates,
             "rng": self.rng.getstate()}, default=list), encoding="utf-8")

    def load(self, directory: Path) -> None:
        state = json.loads((directory / "lab.json").read_text(encoding="utf-8"))
        self.backend.load_state_dict(state["backend"])
        self.updates = int(state["updates"])
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
