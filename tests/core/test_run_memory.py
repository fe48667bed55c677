"""spade_core/run_memory.py: a run's memory opened through the component its config names,
read-only by default (a component that cannot be opened read-only is not opened at all), with
the options this version does not know dropped."""

from __future__ import annotations

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import EnvMemory
from spade_core.run_memory import memory_selection, open_run_memory, read_run_config
from spade_core.testing import load_test_plugins


class FakeReadableOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    readonly: bool = False
    size: int = 1


class FakeWritableOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 1


class FakeOpenedMemory(EnvMemory):
    """Remembers how it was opened; every other member is unused here."""

    def __init__(self, options, context):
        self.options, self.context = options, context

    def _unused(self, *args, **kwargs):
        raise AssertionError("not used by open_run_memory")

    add = clear = find_duplicate = frontier_examples = get = _unused
    negative_examples = records = search = set_status = update_stats = _unused


class FakeMemoryPlugin:
    @hookimpl
    def register_env_memories(self, register):
        register("readable", FakeOpenedMemory, FakeReadableOptions)
        register("writable", FakeOpenedMemory, FakeWritableOptions)


@pytest.fixture
def plugins():
    return load_test_plugins(FakeMemoryPlugin())


def test_the_selection_of_a_config_in_either_form():
    assert memory_selection({"memory": "faiss"}) == ("faiss", {})
    assert memory_selection({"memory": {"plugin": "x", "options": {"a": 1}}}) == ("x", {"a": 1})
    assert memory_selection({"memory": {"options": {}}}) is None
    assert memory_selection(None) is None


def test_the_run_s_own_config_names_the_memory_and_it_opens_read_only(tmp_path, plugins):
    assert read_run_config(tmp_path) is None
    (tmp_path / "config.resolved.yaml").write_text(yaml.safe_dump(
        {"memory": {"plugin": "readable", "options": {"size": 4, "gone": "a newer option"}}}))
    assert read_run_config(tmp_path)["memory"]["plugin"] == "readable"
    memory = open_run_memory(tmp_path, plugins=plugins)
    assert memory.options == FakeReadableOptions(readonly=True, size=4)
    assert memory.context.run_dir == tmp_path
    writer = open_run_memory(tmp_path, memory="readable", options={"size": 2}, readonly=False,
                             plugins=plugins)
    assert writer.options == FakeReadableOptions(readonly=False, size=2)


def test_a_memory_without_a_readonly_option_is_not_opened_behind_a_run(tmp_path, plugins):
    with pytest.raises(ConfigError, match="'writable' cannot be opened read-only"):
        open_run_memory(tmp_path, {"memory": "writable"}, plugins=plugins)
    with pytest.raises(ConfigError, match="memory.options"):
        open_run_memory(tmp_path, memory="writable", options={"size": "big"}, readonly=False,
                        plugins=plugins)
    with pytest.raises(ConfigError, match="memory.plugin"):
        open_run_memory(tmp_path, memory="missing", plugins=plugins)
