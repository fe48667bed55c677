"""The factories of the built-in sandboxes (registered by ``plugin.py``; options in
``options.py``). Light at import: the fork servers and everything heavy load inside
:func:`build_sandbox`; Ray is imported inside :func:`build_ray_sandbox`, and selecting the ``ray``
sandbox without Ray installed is a config error that says how to install it."""

from __future__ import annotations

import importlib.util
from typing import Any

from sandbox.options import ProcessSandboxOptions, RaySandboxOptions

INSTALL_HINT = "pip install 'spade-rl[ray]' (ray==2.60.0)"


def build_sandbox(options: ProcessSandboxOptions | None = None, context: Any = None) -> Any:
    """Start the fork servers and return a ready :class:`sandbox.process_sandbox.ProcessSandbox`."""
    from sandbox.executors import ForkExecutor
    from sandbox.isolation import choose
    from sandbox.process_sandbox import ProcessSandbox

    options = options or ProcessSandboxOptions()
    launch = choose(options.isolation, options.allow_unisolated)
    executor = ForkExecutor(launch, options.workers)
    return ProcessSandbox(executor, options.limits())


def build_ray_sandbox(options: RaySandboxOptions | None = None, context: Any = None) -> Any:
    """Connect to (or start) the Ray cluster, place the actors, and return a ready
    :class:`sandbox.ray_sandbox.RaySandbox`."""
    from spade_core.errors import ConfigError

    if importlib.util.find_spec("ray") is None:
        raise ConfigError(f"the 'ray' sandbox needs Ray, which is not installed: {INSTALL_HINT}")
    from sandbox.ray_sandbox import RaySandbox

    return RaySandbox(options or RaySandboxOptions())
