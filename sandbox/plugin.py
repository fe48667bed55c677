"""Registers the built-in sandbox ``process``: fork servers under bubblewrap, one worker per
episode (or per group of instances of one program, ``open_many``), and its benchmark command.
Light at import: the sandbox itself is built inside the factory (``build.py``)."""

from __future__ import annotations

from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl

from sandbox.build import ProcessSandboxOptions, build_sandbox

__all__ = ["ProcessSandboxOptions", "build_sandbox", "register_commands", "register_sandboxes"]


@hookimpl
def register_sandboxes(register):  # noqa: ANN001, ANN201 - pluggy hook
    register("process", build_sandbox, ProcessSandboxOptions,
             "fork servers under bubblewrap: one isolated worker per episode (no network, "
             "own uid, rlimits, RestrictedPython policy)")


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    """``spade bench sandbox``: its module is imported only when the benchmark is typed."""
    register("sandbox", *from_module("sandbox.bench"), group="bench",
             help="sandbox throughput and latency: isolated workers, plain exec, fresh "
             "interpreter")
