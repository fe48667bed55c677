"""The exports tests' shared run and sandbox: one of each for the whole folder (session-scoped,
visible in this folder only: a pytest-xdist worker goes back and forth between folders, and would
make package-scoped ones again each time it comes back)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.exported_envs import programs


@pytest.fixture(scope="session")
def sandbox():
    from spade_core.components import BuildContext
    from spade_core.plugins import load_plugins

    component = load_plugins().registry.components.get(("sandbox", "process"))
    if component is None:
        pytest.skip("no sandbox named 'process' is registered")
    built = component.build(component.options() if component.options else {}, BuildContext())
    yield built
    built.close()


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory) -> Path:
    """What `spade envs import` leaves: a memory of frontier records, plus one rejected."""
    import envmemory.plugin as memory_plugin
    from envmemory.options import MemoryOptions
    from spade_core.components import BuildContext
    from spade_core.records import EnvRecord, program_id

    root = tmp_path_factory.mktemp("run")
    memory = memory_plugin.build_memory(MemoryOptions(embedder="hashing"),
                                        BuildContext(run_dir=root))
    for family, program in programs():
        memory.add(EnvRecord(id=program_id(program.source), source=program.source,
                             family=family.name, status="frontier",
                             description=program.description))
    bad = "class BrokenEnv:\n    pass\n"
    memory.add(EnvRecord(id=program_id(bad), source=bad, family="reasoning", status="rejected"))
    memory.close()
    return root
