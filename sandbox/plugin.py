"""Registers the built-in sandbox ``process``: fork servers under bubblewrap, one worker per
episode (or per group of instances of one program, ``open_many``). Light at import: the sandbox
itself is built inside the factory."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from spade_core.hookspecs import hookimpl


def _default_workers() -> int:
    return max(1, os.cpu_count() or 1)


class ProcessSandboxOptions(BaseModel):
    """Options of the ``process`` sandbox (config section ``sandbox``)."""

    model_config = ConfigDict(extra="forbid")

    workers: int = Field(default_factory=_default_workers, ge=1, le=256,
                         description="pre-warmed fork servers (each in its own bubblewrap "
                         "sandbox); sessions are spread over them. Default: one per CPU")
    check_concurrency: int | None = Field(default=None, ge=1, le=1024,
                                          description="programs validated at once (default: "
                                          "2 per worker)")
    isolation: Literal["auto", "bwrap", "unshare", "none"] = Field(
        default="auto", description="how to isolate the fork servers; 'auto' picks bwrap, "
        "then unshare; 'none' needs allow_unisolated")
    allow_unisolated: bool = Field(default=False, description="run programs without OS "
                                   "isolation when none is available (prints a warning on "
                                   "every run)")
    load_seconds: float = Field(default=10.0, gt=0, description="wall limit: fork, run the "
                                "module, build the env")
    reset_seconds: float = Field(default=5.0, gt=0, description="wall limit per reset()")
    step_seconds: float = Field(default=5.0, gt=0, description="wall limit per step()")
    episode_seconds: float = Field(default=120.0, gt=0, description="wall limit on the time one "
                                   "session spends inside calls (the agent's thinking time "
                                   "between steps does not count)")
    cpu_seconds: int = Field(default=60, ge=1, description="RLIMIT_CPU per environment "
                             "instance (a worker hosting n instances gets n times this)")
    memory_mb: int = Field(default=1024, ge=64, description="RLIMIT_AS per worker (MiB), "
                           "shared by the instances it hosts")
    max_processes: int = Field(default=1, ge=1, description="RLIMIT_NPROC per worker uid "
                               "(1: no fork, no threads)")
    max_file_bytes: int = Field(default=1 << 20, ge=0, description="RLIMIT_FSIZE")
    max_open_files: int = Field(default=16, ge=8, description="RLIMIT_NOFILE")
    max_observation_chars: int = Field(default=32_768, ge=256)
    max_info_bytes: int = Field(default=65_536, ge=256)
    max_program_chars: int = Field(default=200_000, ge=1000)
    junk_steps: int = Field(default=30, ge=1, description="steps per junk episode in checks")

    def limits(self) -> Any:
        from sandbox.limits import Limits

        return Limits(
            load_seconds=self.load_seconds, reset_seconds=self.reset_seconds,
            step_seconds=self.step_seconds, episode_seconds=self.episode_seconds,
            cpu_seconds=self.cpu_seconds, memory_mb=self.memory_mb,
            max_processes=self.max_processes, max_file_bytes=self.max_file_bytes,
            max_open_files=self.max_open_files, max_observation_chars=self.max_observation_chars,
            max_info_bytes=self.max_info_bytes, max_program_chars=self.max_program_chars,
        )


def build_sandbox(options: ProcessSandboxOptions | None = None, context: Any = None) -> Any:
    """Start the fork servers and return a ready :class:`sandbox.session.ProcessSandbox`."""
    from sandbox.checks import CheckOptions
    from sandbox.isolation import choose
    from sandbox.pool import ForkExecutor
    from sandbox.session import ProcessSandbox

    options = options or ProcessSandboxOptions()
    launch = choose(options.isolation, options.allow_unisolated)
    executor = ForkExecutor(launch, options.workers)
    return ProcessSandbox(
        executor, options.limits(),
        check_workers=options.check_concurrency or 2 * options.workers,
        check_options=CheckOptions(junk_steps=options.junk_steps),
    )


@hookimpl
def register_sandboxes(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("process", build_sandbox, ProcessSandboxOptions,
             "fork servers under bubblewrap: one isolated worker per episode (no network, "
             "own uid, rlimits, RestrictedPython policy)")
