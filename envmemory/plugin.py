"""Registers the built-in environment memories (entry point ``envmemory``): ``faiss`` and
``none`` (no dedupe and no prompt examples: the no-memory ablation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envmemory.options import MemoryOptions, NoMemoryOptions
from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.commands import from_module
from spade_core.hookspecs import hookimpl


def memory_folder(options: MemoryOptions, run_dir: Path | None) -> Path:
    """The memory folder: ``options.path`` itself when absolute, else inside the run directory."""
    path = Path(options.path).expanduser()
    if path.is_absolute():
        return path
    if run_dir is None:
        raise ConfigError(f"memory.options.path {options.path!r} is relative but there is no run "
                          "directory to put it in; give an absolute path")
    return Path(run_dir) / path


def build_memory(options: MemoryOptions, context: BuildContext) -> Any:
    """Factory of the ``faiss`` memory: opens (or creates) the memory folder of the run."""
    from envmemory.faiss_memory import FaissEnvMemory
    from envmemory.store import StoreLockedError

    try:
        return FaissEnvMemory(memory_folder(options, context.run_dir), options,
                              success_threshold=context.success_threshold)
    except StoreLockedError as exc:  # a second run on one memory: the settings are at fault
        raise ConfigError(f"memory.options.path: {exc}") from None


def build_no_memory(options: NoMemoryOptions, context: BuildContext) -> Any:
    """Factory of the ``none`` memory: records in this process only, no dedupe, no examples."""
    from envmemory.nomemory import NoMemory

    return NoMemory(success_threshold=context.success_threshold)


@hookimpl
def register_env_memories(register):
    register("faiss", build_memory, MemoryOptions,
             "SQLite (WAL) records + FAISS dedupe of mastered environments, MiniLM embeddings")
    register("none", build_no_memory, NoMemoryOptions,
             "no memory: no dedupe and no prompt examples (the no-memory ablation)")


@hookimpl
def register_commands(register):  # noqa: ANN001, ANN201 - pluggy hook
    """``spade memory stats|search|export`` and ``spade bench memory``. Their modules are imported
    only when the command is typed (the benchmark's imports NumPy)."""
    register("memory", *from_module("envmemory.memory_cmd"),
             help="inspect a run's environment memory (stats, search, export)")
    register("memory", *from_module("envmemory.memory_bench"), group="bench",
             help="scale, speed and dedupe quality of the environment memory")
