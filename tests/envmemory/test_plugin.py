"""The envmemory plugin: ``faiss`` registered and built from its options (passing the core's
contract check), and a run's memory opened read-only by the run's config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envmemory.faiss_memory import FaissEnvMemory
from envmemory.options import MemoryOptions
from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl
from spade_core.interfaces.memory import EnvMemory

from fakes.memory_records import fill as _fill, hashing_options as _options
from fakes.selfplay import FakeDictMemory


def test_is_an_env_memory_and_registered_as_faiss(tmp_path: Path) -> None:
    from spade_core.components import BuildContext
    from spade_core.plugins import load_plugins

    loaded = load_plugins()
    component = loaded.registry.resolve("env_memory", "faiss", "memory.plugin")
    options = component.options.model_validate({"embedder": "hashing"})
    memory = component.build(options, BuildContext(run_dir=tmp_path))
    try:
        assert isinstance(memory, EnvMemory)
        assert (tmp_path / "memory" / "memory.sqlite").is_file()
    finally:
        memory.close()
    with pytest.raises(Exception, match="extra"):
        component.options.model_validate({"nope": 1})


def test_passes_the_core_contract_check(tmp_path: Path) -> None:
    import envmemory.plugin
    from spade_core.components import BuildContext
    from spade_core.errors import ConfigError
    from spade_core.testing import check_component, load_test_plugins

    loaded = load_test_plugins(envmemory.plugin)
    memory = check_component(loaded, "env_memory", "faiss",
                             options=MemoryOptions(embedder="hashing"),
                             context=BuildContext(run_dir=tmp_path))
    memory.close()
    with pytest.raises(ConfigError, match="relative but there is no run directory"):
        envmemory.plugin.memory_folder(MemoryOptions(), None)


class NoReadonlyMemoryPlugin:
    @hookimpl
    def register_env_memories(self, register):
        register("list", lambda options, context: FakeDictMemory())


def test_open_run_memory_follows_the_config(tmp_path: Path) -> None:
    import envmemory.plugin as envmemory_plugin
    from spade_core.run_memory import open_run_memory
    from spade_core.testing import load_test_plugins

    plugins = load_test_plugins(envmemory_plugin, NoReadonlyMemoryPlugin())
    writer = FaissEnvMemory(tmp_path / "run" / "mem", _options())
    _fill(writer)
    config = {"memory": {"plugin": "faiss", "options": {
        "path": "mem", "embedder": "hashing", "option_of_a_newer_version": 1}}}
    (tmp_path / "run" / "config.resolved.yaml").write_text(json.dumps(config))
    try:
        for given in (config, None):  # given, or read from config.resolved.yaml
            memory = open_run_memory(tmp_path / "run", given, plugins=plugins)
            try:
                assert isinstance(memory, FaissEnvMemory) and memory.readonly
                assert len(list(memory.records())) == 3
            finally:
                memory.close()
        with pytest.raises(ConfigError, match="unknown env memory 'gone'"):
            open_run_memory(tmp_path / "run", {"memory": "gone"}, plugins=plugins)
        with pytest.raises(ConfigError, match="cannot be opened read-only"):
            open_run_memory(tmp_path / "run", {"memory": "list"}, plugins=plugins)
        listed = open_run_memory(tmp_path / "run", {"memory": "list"}, readonly=False,
                                 plugins=plugins)
        assert isinstance(listed, FakeDictMemory)
    finally:
        writer.close()
