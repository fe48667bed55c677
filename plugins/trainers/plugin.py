"""Registers the built-in trainers. ``none`` runs self-play without updating the model: designer
and estimates only, the mode for evaluating a frozen model or a third-party designer. ``grpo``
trains both roles of the one policy with TRL's GRPO loss (plugins/trainers/grpo.py; torch and trl
are imported only when it is built)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plugins.trainers.options import GRPOOptions
from plugins.trainers.grpo_preflight import preflight_grpo
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import Trainer, TrainingSample
from spade_core.records import Role


class NoTraining(Trainer):
    """Counts the samples it is given per role and leaves the model as it is (none trained, no
    optimiser step: the experiment's compute figures read that)."""

    def train(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for role in (Role.DESIGNER, Role.AGENT):
            rewards = [s.reward for s in samples if s.role == role]
            metrics[f"{role}_samples"] = float(len(rewards))
            metrics[f"{role}_mean_reward"] = sum(rewards) / len(rewards) if rewards else 0.0
            metrics[f"{role}_samples_trained"] = 0.0
        return metrics | {"optimizer_steps": 0.0}

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)

    def load(self, directory: Path) -> None:
        return None


def _build_grpo(options, context):
    from plugins.trainers.grpo import build_grpo

    return build_grpo(options, context)


@hookimpl
def register_trainers(register):
    register("none", lambda options, context: NoTraining(), None,
             "no updates: designer and estimates only")
    register("grpo", _build_grpo, GRPOOptions,
             "GRPO (TRL loss) on both roles' samples: agent turns only, per-role advantages",
             preflight=preflight_grpo)
