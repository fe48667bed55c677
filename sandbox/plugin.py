"""Registers the built-in sandboxes ``process`` (fork servers under bubblewrap, one worker per
episode or per group of instances of one program, ``open_many``) and ``ray`` (the process
sandbox run by Ray actors over a cluster; needs the ``ray`` extra), and the benchmark command.
Light at import: options in ``options.py``, the sandboxes built inside the factories (the
``process`` one in ``build.py``, which the ``ray`` actors also call; the ``ray`` one here); Ray
is imported only when the ``ray`` sandbox is built, and selecting it without Ray installed is a
config error that says how to install it."""

from __future__ import annotations

import importlib.util
from typing import Any

from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl

from sandbox.build import build_sandbox
from sandbox.options import ProcessSandboxOptions, RaySandboxOptions

__all__ = ["ProcessSandboxOptions", "RaySandboxOptions", "build_ray_sandbox", "build_sandbox",
           "register_commands", "register_sandboxes"]

INSTALL_HINT = "pip install 'spade-rl[ray]' (ray==2.60.0)"


def build_ray_sandbox(options: RaySandboxOptions | None = None, context: Any = None) -> Any:
    """Connect to (or start) the Ray cluster, place the actors, and return a ready
    :class:`sandbox.ray_sandbox.RaySandbox`."""
    from spade_core.errors import ConfigError

    if importlib.util.find_spec("ray") is None:
        raise ConfigError(f"the 'ray' sandbox needs Ray, which is not installed: {INSTALL_HINT}")
    from sandbox.ray_sandbox import RaySandbox

    return RaySandbox(options or RaySandboxOptions())


@hookimpl
def register_sandboxes(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("process", build_sandbox, ProcessSandboxOptions,
             "fork servers under bubblewrap: one isolated worker per episode (no network, "
             "own uid, rlimits, RestrictedPython policy)")
    register("ray", build_ray_sandbox, RaySandboxOptions,
             "the process sandbox on Ray actors over a cluster: sessions routed to actors, "
             "lost actors replaced and their episodes replayed (extra: spade-rl[ray])")


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    """``spade bench sandbox``: its module is imported only when the benchmark is typed."""
    register("sandbox", *from_module("sandbox.sandbox_bench"), group="bench",
             help="sandbox throughput and latency: isolated workers, plain exec, fresh "
             "interpreter; --sandbox ray: through Ray actors vs the local process sandbox")
