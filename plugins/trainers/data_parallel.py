"""Data-parallel training under ``accelerate launch``: the main process's calls, replayed on every
rank, and each rank's shard of an optimizer step.

Rank 0 runs the loop and calls the trainer; before doing the work itself it broadcasts the call
(``train`` with the samples, ``save``/``load`` with a directory, ``stop``) to the followers, which
wait in :meth:`Commands.receive`. Every rank then encodes the same samples into the same
micro-batches (the encoding is deterministic), and each optimizer step's micro-batches are dealt
round-robin to the ranks; accelerate's prepared model (DDP, or a DeepSpeed/FSDP engine) reduces the
gradients. Each rank runs the same number of forward/backward passes per step (a rank short of
micro-batches repeats one with zero weight), which DDP and ZeRO require.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    """One call of the main process's trainer, as the followers replay it."""

    name: str  # "train", "save", "load" or "stop"
    args: tuple[Any, ...] = ()


class Commands:
    """The main process's calls, broadcast to the other ranks through accelerate's object
    broadcast (gloo on CPU, NCCL on GPU)."""

    def __init__(self, accelerator: Any) -> None:
        self.accelerator = accelerator

    @property
    def world(self) -> int:
        return int(self.accelerator.num_processes)

    def send(self, command: Command) -> None:
        """On rank 0: tell the followers what to do next (no-op in a single process)."""
        if self.world > 1:
            from accelerate.utils import broadcast_object_list

            broadcast_object_list([command], from_process=0)

    def receive(self) -> Command:
        """On a follower: wait for the main process's next call."""
        from accelerate.utils import broadcast_object_list

        box: list[Any] = [None]
        broadcast_object_list(box, from_process=0)
        command = box[0]
        if not isinstance(command, Command):
            raise RuntimeError(f"rank {self.accelerator.process_index}: expected a trainer "
                               f"command from rank 0, got {type(command).__name__}")
        return command


@dataclass(frozen=True)
class StepShard:
    """This rank's part of one optimizer step: indices of its micro-batches (into the iteration's
    list), how many zero-weight passes it adds so every rank runs as many passes, and where the
    whole step (all ranks' micro-batches) starts and how many it has."""

    batches: tuple[int, ...]
    padding: int
    first: int
    step_size: int

    @property
    def passes(self) -> int:
        """Forward/backward passes of every rank in this step: its micro-batches plus padding."""
        return len(self.batches) + self.padding

    @property
    def step(self) -> range:
        """Indices of every micro-batch of this step, on all ranks."""
        return range(self.first, self.first + self.step_size)


def shard_steps(n_batches: int, per_step: int, rank: int, world: int) -> list[StepShard]:
    """Deal each optimizer step's micro-batches (``per_step`` consecutive ones) round-robin to the
    ranks. In one process this is every micro-batch, no padding."""
    shards = []
    for start in range(0, n_batches, per_step):
        step = list(range(start, min(start + per_step, n_batches)))
        mine = tuple(step[rank::world])
        passes = -(-len(step) // world)  # ceil
        shards.append(StepShard(batches=mine, padding=passes - len(mine), first=start,
                                step_size=len(step)))
    return shards


__all__ = ["Command", "Commands", "StepShard", "shard_steps"]
