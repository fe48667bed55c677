"""Trainers: update the policy from both roles' samples."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TrainingSample:
    """One rewarded sample. ``role`` is ``"agent"`` or ``"designer"``.

    ``messages`` is the whole conversation; for a multi-turn agent trajectory the environment's
    turns are user messages and are masked out of the loss. ``meta["masked_turns"]``, when
    present, lists indices into ``messages`` of assistant turns that are masked out too (a
    malformed tool call under the reference protocol).
    """

    role: str
    messages: list[dict[str, str]]
    reward: float
    group: str = ""
    meta: dict[str, object] = field(default_factory=dict)


class Trainer(ABC):
    """Consumes rewarded samples and updates the model the generation backend uses."""

    @abstractmethod
    def train(self, samples: Sequence[TrainingSample]) -> dict[str, float]:
        """One update; returns metrics to log (loss, mean reward per role, ...)."""

    def record_logprobs(self, samples: Sequence[TrainingSample]
                        ) -> list[list[float] | None] | None:
        """Per-token log-probabilities of each sample's completion under the current policy, as
        :meth:`train` will encode it, recorded when samples are generated but trained later
        (a window's designer samples): the trainer then corrects for the policy's moves with
        truncated importance sampling. ``None`` (the default): this trainer records none."""
        return None

    def keep_version(self, version: int, level: int) -> None:
        """Asynchronous training (``loop.async_level``), on the training thread: the weights are
        now policy version ``version``. A trainer that corrects stale samples with the policy
        they were generated with keeps these weights, and drops those more than ``level``
        versions older, so that a sample stamped ``meta["policy_version"]`` gets its behaviour
        log-probabilities from the same weights it was generated with. The default keeps none:
        the generation backend's log-probabilities (``meta["turn_logps"]``) stand in for them."""

    def save(self, directory: Path) -> None:
        """Write what resuming needs (weights or adapter, optimizer) into ``directory``. The
        default writes nothing: a trainer without state (``none``) resumes from the config."""

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote. The default expects nothing."""

    #: True when :meth:`follow` is implemented: the trainer can run under a multi-process launch.
    supports_followers: bool = False

    def follow(self) -> None:
        """On a rank other than 0 of a multi-process launch: carry out the main process's
        ``train``, ``save`` and ``load`` calls (on this rank's shard of the samples) until the main
        process closes the trainer. Only trainers with ``supports_followers`` implement it."""
        raise NotImplementedError(f"{type(self).__name__} cannot run under a multi-process launch")

    def close(self) -> None:
        """Release resources; the default has none."""
