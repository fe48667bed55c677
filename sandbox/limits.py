"""Resource and time limits for one worker, as sent from the host to the fork server."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Limits:
    """What one environment instance (one session of one program) may use.

    Time limits are wall-clock seconds per call and per instance, enforced by the host with
    SIGKILL to the worker's process group (and, in batches, by a timer in the worker);
    ``episode_seconds`` caps the sum of a session's call times (not the idle time between calls,
    when the agent is generating); ``cpu_seconds`` is the kernel's ``RLIMIT_CPU`` over the
    worker's whole life, times the number of instances it hosts; ``memory_mb`` is the worker's
    ``RLIMIT_AS``, shared by its instances.
    """

    load_seconds: float = 10.0
    reset_seconds: float = 5.0
    step_seconds: float = 5.0
    episode_seconds: float = 120.0
    cpu_seconds: int = 60
    memory_mb: int = 1024
    max_processes: int = 1
    max_file_bytes: int = 1 << 20
    max_open_files: int = 16
    max_observation_chars: int = 32_768
    max_info_bytes: int = 65_536
    max_program_chars: int = 200_000

    @property
    def max_frame_bytes(self) -> int:
        """Largest reply the host reads from a worker: observation plus info plus envelope."""
        return 12 * self.max_observation_chars + self.max_info_bytes + 4096

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Limits":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
