"""The ``process`` sandbox's factory: registered by ``plugin.py``, and called directly by the
``ray`` sandbox's actors, the benchmarks and tests. Light at import: the fork servers and
everything heavy load inside :func:`build_sandbox`."""

from __future__ import annotations

from typing import Any

from sandbox.options import ProcessSandboxOptions


def build_sandbox(options: ProcessSandboxOptions | None = None, context: Any = None) -> Any:
    """Start the fork servers and return a ready :class:`sandbox.process_sandbox.ProcessSandbox`."""
    from sandbox.executors import ForkExecutor
    from sandbox.isolation import choose
    from sandbox.process_sandbox import ProcessSandbox

    options = options or ProcessSandboxOptions()
    launch = choose(options.isolation, options.allow_unisolated)
    executor = ForkExecutor(launch, options.workers)
    return ProcessSandbox(executor, options.limits())
