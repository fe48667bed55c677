"""The ``process`` sandbox's options and its factory (registered by ``plugin.py``). Light at
import: the fork servers and everything heavy load inside :func:`build_sandbox`."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import ConfigDict, Field

from sandbox.limit_options import LimitOptions


def _default_workers() -> int:
    return max(1, os.cpu_count() or 1)


class ProcessSandboxOptions(LimitOptions):
    """Options of the ``process`` sandbox (config section ``sandbox``): how the fork servers run,
    and every limit of :class:`sandbox.limits.Limits` as a flat key of its own (inherited from
    ``LimitOptions``, which also gives ``limits()``)."""

    model_config = ConfigDict(extra="forbid")

    workers: int = Field(default_factory=_default_workers, ge=1, le=256,
                         description="pre-warmed fork servers (each in its own bubblewrap "
                         "sandbox); sessions are spread over them. Default: one per CPU")
    isolation: Literal["auto", "bwrap", "unshare", "none"] = Field(
        default="auto", description="how to isolate the fork servers; 'auto' picks bwrap, "
        "then unshare; 'none' needs allow_unisolated")
    allow_unisolated: bool = Field(default=False, description="run programs without OS "
                                   "isolation when none is available (prints a warning on "
                                   "every run)")


def build_sandbox(options: ProcessSandboxOptions | None = None, context: Any = None) -> Any:
    """Start the fork servers and return a ready :class:`sandbox.process_sandbox.ProcessSandbox`."""
    from sandbox.executors import ForkExecutor
    from sandbox.isolation import choose
    from sandbox.process_sandbox import ProcessSandbox

    options = options or ProcessSandboxOptions()
    launch = choose(options.isolation, options.allow_unisolated)
    executor = ForkExecutor(launch, options.workers)
    return ProcessSandbox(executor, options.limits())
