"""Where this process stands in a multi-process launch (``accelerate launch``, ``torchrun``).

The core decides who does what; the trainer plugin owns the communication. Rank 0 (the *main*
process) runs the whole loop: corpus, designer, sandbox, memory, generation and the run directory.
Every other rank (a *follower*) builds only the generation backend and the trainer and calls
:meth:`spade_core.interfaces.Trainer.follow`, which carries out the main process's ``train``,
``save`` and ``load`` calls on its shard of the samples until the main process closes the
trainer. Read from the launcher's environment variables: no torch import here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchInfo:
    """This process's place in the launch; one process alone is rank 0 of 1."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        """True in the process that runs the loop."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        return int(value) if value.strip() else default
    except ValueError:
        return default


def launch_info() -> LaunchInfo:
    """Read ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` as torchrun and ``accelerate launch`` set
    them (a plain ``spade run`` has none: rank 0 of 1)."""
    world = max(1, _int("WORLD_SIZE", 1))
    rank = min(max(0, _int("RANK", 0)), world - 1)
    return LaunchInfo(rank=rank, world_size=world, local_rank=max(0, _int("LOCAL_RANK", 0)))


__all__ = ["LaunchInfo", "launch_info"]
