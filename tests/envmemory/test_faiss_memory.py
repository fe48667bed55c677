"""The environment memories' shared behaviour and ``FaissEnvMemory``: the EnvMemory base class's
defaults (checkpoints as JSON lines, batched calls, counts) on a small in-test memory, then the
faiss memory with the hashing embedder: records, dedupe, mastery, examples, index files, its own
checkpoints on an open memory, and read-only opening and search by a stored record without the
embedding model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from envmemory.embed import HashingEmbedder
from envmemory.faiss_memory import FaissEnvMemory, MemoryConfigError, MemoryReadOnlyError
from envmemory.options import MemoryOptions
from envmemory.representation import fingerprint
from envmemory.store import StoreLockedError
from spade_core.interfaces.memory import EnvMemory
from spade_core.records import EnvProgram, EnvRecord
from spade_core.selfplay.checkpoint import restore_memory, snapshot_memory

from fakes.memory_records import (fill as _fill, hashing_options as _options, program as _program,
                                  programs as _programs, make_record as _make_record,
                                  snapshot_view as _snapshot_view)
from fakes.selfplay import FakeDictMemory


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
    memory.add(_make_record(_programs()["caesar_decode/base"]))
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
    memory.add(_make_record(_programs()["maze_walk/base"]))
    restore_memory(memory, checkpoint, {"kind": "checkpoint"})
    assert _snapshot_view(memory) == before
    restore_memory(memory, checkpoint, None)  # nothing was snapshotted: left as it is
    assert _snapshot_view(memory) == before


# -- the faiss memory ------------------------------------------------------------------------------


def _master(memory: FaissEnvMemory, env_id: str) -> EnvRecord:
    return memory.update_stats(env_id, 0, [1, 1, 1, 1], [1, 1, 1, 1],
                               {"regret": 0.0, "win_rate": 1.0}, 0.0)


def test_dedupe_refuses_near_duplicates_of_mastered_only(tmp_path: Path) -> None:
    programs = _programs()
    memory = FaissEnvMemory(tmp_path, _options())
    base = programs["number_guess/base"]
    record = _make_record(base)
    memory.add(record)
    reworded = EnvProgram(programs["number_guess/combined"]["source"], "games",
                          description=programs["number_guess/combined"]["description"])
    assert memory.find_duplicate(reworded) is None  # frontier envs are not a dedupe index
    assert _master(memory, record.id).status == "mastered"
    hit = memory.find_duplicate(reworded)
    assert hit is not None and hit[0].id == record.id and hit[1] >= memory.threshold
    for other in ("digit_sum/base", "caesar_decode/base", "nim_game/base"):
        row = programs[other]
        assert memory.find_duplicate(EnvProgram(row["source"], "games",
                                                description=row["description"])) is None
    same = memory.find_duplicate(EnvProgram(base["source"], "games"))
    assert same is not None and same[1] == 1.0
    memory.close()


def test_batched_dedupe_agrees_and_records_lists_everything(tmp_path: Path) -> None:
    programs = _programs()
    memory = FaissEnvMemory(tmp_path, _options())
    base = _make_record(programs["number_guess/base"])
    memory.add(base)
    _master(memory, base.id)
    others = [_make_record(programs[name]) for name in ("digit_sum/base", "caesar_decode/base")]
    for record in others:
        memory.add(record)
    candidates = [EnvProgram(programs[name]["source"], "games",
                             description=programs[name]["description"])
                  for name in ("number_guess/combined", "digit_sum/base", "nim_game/base")]
    batched = memory.find_duplicates(candidates)
    single = [memory.find_duplicate(program) for program in candidates]
    assert [(m[0].id, round(m[1], 5)) if m else None for m in batched] == \
        [(m[0].id, round(m[1], 5)) if m else None for m in single]
    assert batched[0] is not None and batched[0][0].id == base.id and batched[2] is None
    assert [r.id for r in memory.records()] == [base.id] + [r.id for r in others]


def test_status_rules_and_history(tmp_path: Path) -> None:
    memory = FaissEnvMemory(tmp_path, _options())
    rows = _programs()
    easy, hard, mid = (_make_record(rows[f"{b}/base"])
                       for b in ("digit_sum", "maze_walk", "nim_game"))
    for r in (easy, hard, mid):
        memory.add(r)
    assert memory.update_stats(easy.id, 0, [1, 1], [1, 1], {}, 0.0).status == "frontier"
    done = memory.update_stats(easy.id, 1, [1, 1], [1, 1], {}, 0.0)
    assert done.status == "mastered" and [h.iteration for h in done.history] == [0, 1]
    # mastered is final
    assert memory.update_stats(easy.id, 2, [0] * 4, [0] * 4, {}, 0.0).status == "mastered"
    assert memory.update_stats(hard.id, 0, [0, 0, 0, 0], [0] * 4, {}, 0.0).status == "too_hard"
    assert memory.update_stats(hard.id, 1, [1, 1, 1, 1], [0] * 4, {}, 0.0).status == "frontier"
    got = memory.update_stats(mid.id, 0, [1, 1, 1, 0], [1, 0, 0, 0],
                              {"regret": 0.5, "win_rate": 0.25}, 0.7)
    assert got.status == "frontier" and got.stats["regret"] == 0.5
    assert got.history[0].unhinted == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(KeyError, match="not in the memory"):
        memory.update_stats("missing", 0, [], [], {}, 0.0)
    # One program designed twice in an iteration: the second play joins the first's entry.
    twice = memory.update_stats(hard.id, 1, [1, 0], [1, 1], {"regret": -0.5}, 0.2)
    assert [h.iteration for h in twice.history] == [0, 1]
    assert twice.history[1].hinted == [1.0] * 4 + [1.0, 0.0]
    assert twice.history[1].unhinted == [0.0] * 4 + [1.0, 1.0]
    assert twice.history[1].figures == {"regret": -0.5} and twice.stats["rollouts_unhinted"] == 10
    # A window's delayed reward joins the figures of one history entry, kept on reopening.
    assert memory.add_figures(mid.id, 0, {"delayed_designer_reward": 0.25})
    assert not memory.add_figures(mid.id, 5, {"delayed_designer_reward": 1.0})
    memory.close()
    reopened = FaissEnvMemory(tmp_path, _options())
    [entry] = reopened.get(mid.id).history
    assert entry.figures == {"regret": 0.5, "win_rate": 0.25, "delayed_designer_reward": 0.25}
    assert entry.designer_reward == 0.7  # the immediate estimate stays beside it
    reopened.close()


def test_examples_rank_and_filter_by_family(tmp_path: Path) -> None:
    memory = FaissEnvMemory(tmp_path, _options())
    for i, (family, regret, win) in enumerate([("a", 0.1, 0.5), ("a", 0.6, 0.5), ("b", 0.9, 0.5),
                                               ("a", 0.9, 0.95)]):
        memory.add(EnvRecord(id=f"e{i}", source=f"class E{i}Env:\n    x = {i}\n",
                             family=family, status="frontier"))
        memory.update_stats(f"e{i}", 0, [1], [0], {"regret": regret, "win_rate": win}, regret)
    assert [r.id for r in memory.frontier_examples(5, "a")] == ["e1", "e0"]  # e3 outside band
    assert [r.id for r in memory.frontier_examples(1)] == ["e2"]
    memory.add(EnvRecord(id="m", source="class MEnv:\n    y = 1\n", family="a",
                         status="mastered"))
    assert [r.id for r in memory.negative_examples(3, "a")] == ["m"]
    assert memory.negative_examples(3, "b") == []
    memory.close()


def test_same_id_counts_proposals_and_survives_reopen(tmp_path: Path) -> None:
    memory = FaissEnvMemory(tmp_path, _options())
    record = _make_record(_programs()["gcd_lcm/base"])
    memory.add(record)
    memory.add(_make_record(_programs()["gcd_lcm/base"], status="duplicate"))
    _master(memory, record.id)
    memory.close()
    again = FaissEnvMemory(tmp_path, _options())
    got = again.get(record.id)
    assert got.status == "mastered" and got.times_proposed == 2 and len(got.embedding) == 384
    assert again.load_report == "loaded"
    again.close()


def test_settings_mismatch_and_second_writer_are_refused(tmp_path: Path) -> None:
    memory = FaissEnvMemory(tmp_path, _options())
    with pytest.raises(StoreLockedError, match="already open for writing"):
        FaissEnvMemory(tmp_path, _options())
    memory.close()
    with pytest.raises(MemoryConfigError, match="representation 'task'"):
        FaissEnvMemory(tmp_path, _options(representation="code"))
    with pytest.raises(MemoryConfigError, match="embedder"):
        FaissEnvMemory(tmp_path, _options(), embedder=HashingEmbedder(dim=64))


def test_index_switches_to_ivf_and_reloads_verified(tmp_path: Path) -> None:
    memory = FaissEnvMemory(tmp_path, _options(switch_size=300, save_every=50))
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((700, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i, v in enumerate(vectors):
        memory.add(EnvRecord(id=f"r{i}", source=f"class R{i}Env:\n    v = {i}\n", family="f",
                             status="mastered", embedding=v.tolist()))
    assert memory.dedupe_index.kind == "ivf" and memory.dedupe_index.ntotal == 700
    hits = memory.nearest_mastered(vectors[123], k=3)
    assert hits[0][0].id == "r123" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    memory.close()
    again = FaissEnvMemory(tmp_path, _options(switch_size=300))
    assert again.load_report == "loaded" and again.dedupe_index.kind == "ivf"
    assert again.nearest_mastered(vectors[5], k=1)[0][0].id == "r5"
    again.close()
    # damage the index file: it is rebuilt from the stored embeddings
    manifest = json.loads((tmp_path / "dedupe_index.json").read_text())
    with open(tmp_path / manifest["file"], "r+b") as handle:
        handle.seek(100)
        handle.write(b"\x00garbage\x00")
    third = FaissEnvMemory(tmp_path, _options(switch_size=300))
    assert third.load_report.startswith("rebuilt") and third.dedupe_index.ntotal == 700
    assert third.nearest_mastered(vectors[9], k=1)[0][0].id == "r9"
    third.close()


def test_faiss_checkpoint_round_trips_on_the_open_memory(tmp_path: Path) -> None:
    rows = _programs()
    memory = FaissEnvMemory(tmp_path / "memory", _options())
    records = _fill(memory)
    renamed = _program(rows["digit_sum/renamed"])
    assert memory.find_duplicate(renamed)[0].id == records[0].id
    before = _snapshot_view(memory)
    memory.save_checkpoint(tmp_path / "ckpt")
    assert {p.name for p in (tmp_path / "ckpt").iterdir()} == {
        "memory.sqlite", "dedupe_index.json", "dedupe_index-1.faiss"}
    # after the snapshot: a new mastered record and more play
    later = _make_record(rows["caesar_decode/base"])
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


def test_faiss_clear_empties_records_and_dedupe_index(tmp_path: Path) -> None:
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
    import envmemory.faiss_memory as memory_module

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
            reader.add(_make_record(_programs()["maze_walk/base"]))
        with pytest.raises(MemoryReadOnlyError):
            reader.restore_checkpoint(tmp_path)
        writer.add(_make_record(_programs()["maze_walk/base"]))  # the writer is not blocked
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


def test_fingerprints_are_stored_only_for_structural_matching_and_filled_in_later(
        tmp_path: Path) -> None:
    """A memory written without structural matching stores no fingerprints (the lab: none of
    the canonical-source work); opened with it, the missing ones are filled in and a renamed
    copy of a mastered program is found by its structure."""
    rows = _programs()
    plain = FaissEnvMemory(tmp_path, _options(structural_match=False))
    records = _fill(plain)
    assert plain.store.conn.execute(
        "SELECT COUNT(*) FROM envs WHERE fingerprint IS NOT NULL").fetchone()[0] == 0
    plain.close()
    structural = FaissEnvMemory(tmp_path, _options(structural_match=True))
    assert structural.store.conn.execute(
        "SELECT COUNT(*) FROM envs WHERE fingerprint IS NULL").fetchone()[0] == 0
    match = structural.store.by_fingerprint(fingerprint(rows["digit_sum/renamed"]["source"]),
                                            ("mastered",))
    assert match is not None and match.id == records[0].id
    assert structural.store.fill_fingerprints(lambda source: "x") == 0  # nothing left to fill
    structural.close()
