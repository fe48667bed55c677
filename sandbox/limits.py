"""Resource and time limits for one worker, as sent from the host to the fork server.

:class:`Limits` is the one definition of the limits: each field's default, bounds and description
are here; the config options (``options.py``) are built from these fields. It is a plain
dataclass because the fork server and its workers import it, and they never load pydantic.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


def _limit(default: float, description: str, **bounds: float) -> Any:
    """A limit field: its default, and as metadata its config description and pydantic bounds
    (``gt``, ``ge``), which the config options check and ``Limits`` itself does not."""
    return field(default=default, metadata={"description": description, **bounds})


@dataclass(frozen=True)
class Limits:
    """What one environment instance (one session of one program) may use.

    The time limits count the worker's CPU time, so a valid program's verdict does not depend on
    the machine's load; ``wall_factor`` times each of them is a wall-clock backstop against a
    call that waits without computing. The host enforces them per call and per instance with
    SIGKILL to the worker's process group whatever the call is doing, C code included (in a
    batch or a multi-instance load per call too, through the worker's progress markers; there
    also by a CPU-time timer in the worker, which answers a Python-level overrun gracefully);
    ``episode_seconds`` caps the CPU time of a session's calls (not the idle time between
    calls, when the agent is generating); ``cpu_seconds`` is the kernel's ``RLIMIT_CPU`` over
    the worker's whole life, times the number of instances it hosts; ``memory_mb`` is the
    worker's ``RLIMIT_AS``, shared by its instances.
    """

    load_seconds: float = _limit(10.0, "CPU-time limit: fork, run the module, build the env "
                                 "(per instance)", gt=0)
    reset_seconds: float = _limit(5.0, "CPU-time limit per reset()", gt=0)
    step_seconds: float = _limit(5.0, "CPU-time limit per step() and solution()", gt=0)
    episode_seconds: float = _limit(120.0, "CPU-time limit on one session's calls in total "
                                    "(the agent's thinking time between steps does not "
                                    "count)", gt=0)
    wall_factor: float = _limit(4.0, "wall-clock backstop of every CPU-time limit above, as a "
                                "multiple of it: ends a call that waits without computing",
                                ge=1)
    cpu_seconds: int = _limit(60, "RLIMIT_CPU per environment instance (a worker hosting n "
                              "instances gets n times this)", ge=1)
    memory_mb: int = _limit(1024, "RLIMIT_AS per worker (MiB), shared by the instances it hosts",
                            ge=64)
    max_processes: int = _limit(1, "RLIMIT_NPROC per worker uid (1: no fork, no threads)", ge=1)
    max_file_bytes: int = _limit(1 << 20, "RLIMIT_FSIZE", ge=0)
    max_open_files: int = _limit(16, "RLIMIT_NOFILE", ge=8)
    max_observation_chars: int = _limit(32_768, "most characters per observation", ge=256)
    max_info_bytes: int = _limit(65_536, "most bytes per info dict (as JSON) and per "
                                 "solution() value", ge=256)
    max_program_chars: int = _limit(200_000, "most characters of program source", ge=1000)

    @property
    def max_frame_bytes(self) -> int:
        """Largest reply the host reads from a worker: observation plus info plus envelope."""
        return 12 * self.max_observation_chars + self.max_info_bytes + 4096

    def to_dict(self) -> dict[str, Any]:
        """The limits as JSON-ready values (how they travel to the fork server)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Limits":
        """Limits from :meth:`to_dict`'s output; unknown keys are ignored, missing ones default."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
