"""The EnvMemory base class: its defaults (checkpoints as JSON lines, batched calls, counts) on a
small in-test memory, the faiss memory's own checkpoints on an open memory, read-only opening and
search by a stored record without the embedding model, and opening a run's memory by its config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envmemory.memory import FaissEnvMemory, MemoryConfigError, MemoryReadOnlyError
from envmemory.options import MemoryOptions
from envmemory.store import StoreLockedError
from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl
from spade_core.interfaces.memory import EnvMemory
from spade_core.records import EnvProgram, EnvRecord
from spade_core.selfplay.checkpoint import restore_memory, snapshot_memory

from fakes.selfplay import FakeDictMemory

DATA = Path(__file__).parent / "data"


def _programs() -> dict[str, dict]:
    rows = [json.loads(line) for line in (DATA / "programs.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


def _program(row: dict) -> EnvProgram:
    return EnvProgram(row["source"], "games", description=row["description"])


def _record(row: dict, status: str = "frontier") -> EnvRecord:
    program = _program(row)
    return EnvRecord(id=program.id, source=program.source, family="games", status=status,
                     description=program.description)


def _fill(memory: EnvMemory) -> list[EnvRecord]:
    rows = _programs()
    records = [_record(rows[f"{name}/base"]) for name in ("digit_sum", "nim_game", "gcd_lcm")]
    for record in records:
        memory.add(record)
    memory.update_stats(records[0].id, 0, [1, 1, 1, 1], [1, 1, 1, 1], {"regret": 0.0}, 0.0)
    memory.update_stats(records[1].id, 0, [1, 1, 0, 0], [0, 0, 0, 0], {"regret": 0.5}, 0.5)
    memory.update_stats(records[1].id, 1, [1, 1, 1, 0], [1, 0, 0, 0], {"regret": 0.5}, 0.5)
    memory.add(records[2])  # proposed twice
    return records


def _snapshot_view(memory: EnvMemory) -> list[tuple]:
    return [(r.id, r.status, r.times_proposed, json.dumps(r.stats, sort_keys=True),
             [(h.iteration, h.hinted, h.unhinted, h.figures) for h in r.history])
            for r in memory.records()]


# -- the base class's defaults ---------------------------------------------------------------------


def test_required_methods_are_abstract() -> None:
    assert EnvMemory.__abstractmethods__ == {
        "find_duplicate", "add", "update_stats", "get", "frontier_examples",
        "negative_examples", "records", "search", "set_status", "clear"}
    with pytest.raises(TypeError):
        EnvMemory()  # type: ignore[abstract]


def test_default_checkpoint_round_trips_and_drops_later_records(tmp_path: Path) -> None:
    memory = FakeDictMemory()
    _fill(memory)
    before = _snapshot_view(memory)
    memory.save_checkpoint(tmp_path / "ckpt")
    manifest = json.loads((tmp_path / "ckpt" / "records.json").read_text())
    assert manifest == {"format": "spade-env-records", "version": 1, "records": 3}
    # after the snapshot: a new record, more play, a new status
    memory.add(_record(_programs()["caesar_decode/base"]))
    first = next(memory.records())
    memory.update_stats(first.id, 1, [1], [1], {}, 0.0)
    memory.restore_checkpoint(tmp_path / "ckpt")
    assert _snapshot_view(memory) == before
    fresh = FakeDictMemory()
    fresh.restore_checkpoint(tmp_path / "ckpt")
    assert _snapshot_view(fresh) == before
    assert fresh.get(first.id).history[0].hinted == [1, 1, 1, 1]


def test_default_restore_refuses_a_damaged_snapshot_untouched(tmp_path: Path) -> None:
    memory = FakeDictMemory()
    _fill(memory)
    memory.save_checkpoint(tmp_path / "ckpt")
    before = _snapshot_view(memory)
    lines = (tmp_path / "ckpt" / "records.jsonl").read_text().splitlines()
    (tmp_path / "ckpt" / "records.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ValueError, match="manifest lists 3 records"):
        memory.restore_checkpoint(tmp_path / "ckpt")
    with pytest.raises(ValueError, match="not an environment-memory snapshot"):
        memory.restore_checkpoint(tmp_path / "nowhere")
    assert _snapshot_view(memory) == before


def test_default_optional_methods(tmp_path: Path) -> None:
    memory = FakeDictMemory()
    records = _fill(memory)
    programs = [EnvProgram(records[0].source, "games"), EnvProgram("class XEnv: pass", "games")]
    assert [hit and hit[0].id for hit in memory.find_duplicates(programs)] == [records[0].id, None]
    many = memory.search_many([records[0], "text"], k=5)
    assert [r.id for r, _ in many[0]] == [records[1].id, records[2].id]
    assert len(many[1]) == 3
    stats = memory.stats()
    assert stats["records"] == 3 and stats["proposals"] == 4
    assert stats["by_status"]["mastered"] == 1 and stats["by_status"]["too_hard"] == 0
    assert stats["by_family"] == {"games": {"total": 3, "mastered": 1}}
    memory.close()  # the default has nothing to release


def test_checkpoint_module_goes_through_the_interface(tmp_path: Path) -> None:
    memory = FakeDictMemory()
    _fill(memory)
    before = _snapshot_view(memory)
    checkpoint = tmp_path / "iter-000001"
    assert snapshot_memory(memory, checkpoint / "memory") == {"kind": "checkpoint"}
    memory.add(_record(_programs()["maze_walk/base"]))
    restore_memory(memory, checkpoint, {"kind": "checkpoint"})
    assert _snapshot_view(memory) == before
    restore_memory(memory, checkpoint, None)  # nothing was snapshotted: left as it is
    assert _snapshot_view(memory) == before


# -- the faiss memory ------------------------------------------------------------------------------


def _options(**kw) -> MemoryOptions:
    return MemoryOptions(embedder="hashing", mastery_rollouts=4, too_hard_rollouts=4, **kw)


def test_faiss_checkpoint_round_trips_on_the_open_memory(tmp_path: Path) -> None:
    rows = _programs()
    memory = FaissEnvMemory(tmp_path / "memory", _options())
    records = _fill(memory)
    renamed = _program(rows["digit_sum/renamed"])
    assert memory.find_duplicate(renamed)[0].id == records[0].id
    before = _snapshot_view(memory)
    memory.save_checkpoint(tmp_path / "ckpt")
    assert {p.name for p in (tmp_path / "ckpt").iterdir()} == {
        "memory.sqlite", "pool.json", "pool-1.faiss"}
    # after the snapshot: a new mastered record and more play
    later = _record(rows["caesar_decode/base"])
    memory.add(later)
    memory.update_stats(later.id, 0, [1, 1, 1, 1], [1, 1, 1, 1], {}, 0.0)
    memory.update_stats(records[1].id, 2, [0], [0], {}, 0.0)
    assert memory.find_duplicate(_program(rows["caesar_decode/renamed"])) is not None

    memory.restore_checkpoint(tmp_path / "ckpt")
    assert _snapshot_view(memory) == before and memory.get(later.id) is None
    assert memory.dedupe_index.ntotal == memory.store.index_size() == 1
    assert memory.find_duplicate(renamed)[0].id == records[0].id  # mastered: still refused
    assert memory.find_duplicate(_program(rows["caesar_decode/renamed"])) is None
    with pytest.raises(StoreLockedError):  # the writer lock was kept throughout
        FaissEnvMemory(tmp_path / "memory", _options())
    memory.add(later)  # the memory goes on working
    memory.close()
    again = FaissEnvMemory(tmp_path / "memory", _options())
    assert again.load_report == "loaded" and again.get(later.id) is not None
    again.close()


def test_faiss_restore_refuses_bad_snapshots_and_keeps_the_data(tmp_path: Path) -> None:
    memory = FaissEnvMemory(tmp_path / "memory", _options())
    _fill(memory)
    before = _snapshot_view(memory)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no memory snapshot"):
        memory.restore_checkpoint(tmp_path / "empty")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "memory.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="not a readable memory database"):
        memory.restore_checkpoint(tmp_path / "junk")
    other = FaissEnvMemory(tmp_path / "other", _options(representation="code"))
    other.save_checkpoint(tmp_path / "other-ckpt")
    other.close()
    with pytest.raises(MemoryConfigError, match="representation 'code'"):
        memory.restore_checkpoint(tmp_path / "other-ckpt")
    assert _snapshot_view(memory) == before
    memory.close()


def test_faiss_clear_empties_records_and_pool(tmp_path: Path) -> None:
    memory = FaissEnvMemory(tmp_path, _options())
    _fill(memory)
    memory.clear()
    assert list(memory.records()) == [] and memory.dedupe_index.ntotal == 0
    assert memory.stats()["records"] == 0
    memory.close()


def test_search_by_text_program_and_record(tmp_path: Path) -> None:
    rows = _programs()
    memory = FaissEnvMemory(tmp_path, _options())
    records = _fill(memory)
    digit_sum = rows["digit_sum/renamed"]
    assert memory.search(_program(digit_sum), k=1)[0][0].id == records[0].id
    assert memory.search(digit_sum["description"], k=1)[0][0].id == records[0].id
    hits = memory.search(memory.get(records[0].id), k=5)
    assert [r.id for r, _ in hits] and records[0].id not in [r.id for r, _ in hits]
    assert all(a >= b for (_, a), (_, b) in zip(hits, hits[1:]))
    only = memory.search("anything", k=5, statuses=["mastered"])
    assert [r.id for r, _ in only] == [records[0].id]
    assert memory.search("anything", k=5, family="other") == []
    many = memory.search_many([memory.get(r.id) for r in records], k=2)
    assert [[r.id for r, _ in hits] for hits in many] == [
        [r.id for r, _ in memory.search(memory.get(record.id), k=2)] for record in records]
    memory.close()


def test_readonly_search_by_stored_record_needs_no_embedder(tmp_path: Path, monkeypatch) -> None:
    import envmemory.memory as memory_module

    writer = FaissEnvMemory(tmp_path, _options())  # still open: the run goes on writing
    records = _fill(writer)
    expected = [r.id for r, _ in writer.search(writer.get(records[1].id), k=2)]

    def no_model(*args, **kwargs):
        raise AssertionError("the embedding model must not be loaded")

    monkeypatch.setattr(memory_module, "load_embedder", no_model)
    reader = FaissEnvMemory(tmp_path, MemoryOptions(embedder="minilm", readonly=True))
    try:
        hits = reader.search(reader.get(records[1].id), k=2)
        assert [r.id for r, _ in hits] == expected
        stats = reader.stats()
        assert stats["records"] == 3 and stats["embedder"] == "hashing/384"
        assert [r.id for r in reader.records()] == [r.id for r in records]
        with pytest.raises(MemoryReadOnlyError, match="read-only"):
            reader.add(_record(_programs()["maze_walk/base"]))
        with pytest.raises(MemoryReadOnlyError):
            reader.restore_checkpoint(tmp_path)
        writer.add(_record(_programs()["maze_walk/base"]))  # the writer is not blocked
        assert reader.stats()["records"] == 4
    finally:
        reader.close()
        writer.close()


def test_readonly_text_search_uses_the_stored_embedder(tmp_path: Path) -> None:
    writer = FaissEnvMemory(tmp_path, _options())
    records = _fill(writer)
    writer.close()
    reader = FaissEnvMemory(tmp_path, MemoryOptions(readonly=True))  # options say minilm
    try:
        assert reader.embedder.name == "hashing/384"
        hit = reader.search(_program(_programs()["nim_game/renamed"]), k=1)
        assert hit[0][0].id == records[1].id
    finally:
        reader.close()


# -- opening a run's memory by its config ----------------------------------------------------------


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
