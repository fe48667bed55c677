"""FaissEnvMemory with the hashing embedder: records, dedupe, mastery, examples, index files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from envmemory.embed import HashingEmbedder, load_embedder
from envmemory.index import DedupeIndex, IndexConfig, IndexFiles
from envmemory.memory import FaissEnvMemory, MemoryConfigError
from envmemory.options import MemoryOptions
from envmemory.store import StoreLockedError
from spade_core.interfaces.memory import EnvMemory
from spade_core.records import EnvProgram, EnvRecord

DATA = Path(__file__).parent / "data"


def _programs() -> dict[str, dict]:
    rows = [json.loads(line) for line in (DATA / "programs.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


def _options(**kw) -> MemoryOptions:
    return MemoryOptions(embedder="hashing", mastery_rollouts=4, too_hard_rollouts=4, **kw)


def _record(row: dict, status: str = "frontier") -> EnvRecord:
    program = EnvProgram(row["source"], "games", description=row["description"])
    return EnvRecord(id=program.id, source=row["source"], family="games", status=status,
                     description=row["description"])


def _master(memory: FaissEnvMemory, env_id: str) -> EnvRecord:
    return memory.update_stats(env_id, 0, [1, 1, 1, 1], [1, 1, 1, 1],
                               {"regret": 0.0, "win_rate": 1.0}, 0.0)


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


def test_dedupe_refuses_near_duplicates_of_mastered_only(tmp_path: Path) -> None:
    programs = _programs()
    memory = FaissEnvMemory(tmp_path, _options())
    base = programs["number_guess/base"]
    record = _record(base)
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
    base = _record(programs["number_guess/base"])
    memory.add(base)
    _master(memory, base.id)
    others = [_record(programs[name]) for name in ("digit_sum/base", "caesar_decode/base")]
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
    easy, hard, mid = (_record(rows[f"{b}/base"]) for b in ("digit_sum", "maze_walk", "nim_game"))
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
    record = _record(_programs()["gcd_lcm/base"])
    memory.add(record)
    memory.add(_record(_programs()["gcd_lcm/base"], status="duplicate"))
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
    manifest = json.loads((tmp_path / "pool.json").read_text())
    with open(tmp_path / manifest["file"], "r+b") as handle:
        handle.seek(100)
        handle.write(b"\x00garbage\x00")
    third = FaissEnvMemory(tmp_path, _options(switch_size=300))
    assert third.load_report.startswith("rebuilt") and third.dedupe_index.ntotal == 700
    assert third.nearest_mastered(vectors[9], k=1)[0][0].id == "r9"
    third.close()


def test_pool_index_catches_up_with_rows_saved_after_it(tmp_path: Path) -> None:
    config = IndexConfig(dim=8)
    pool = DedupeIndex(config)
    rows = np.eye(8, dtype=np.float32)
    pool.add(np.arange(1, 5), rows[:4])
    files = IndexFiles(tmp_path, "test/8")
    files.save(pool)
    stored = {i + 1: rows[i] for i in range(8)}

    def after(w):
        ids = np.array([i for i in stored if i > w], dtype=np.int64)
        yield ids, np.stack([stored[i] for i in ids])

    loaded, how = files.load(config, lambda w: sum(1 for i in stored if i <= w), after)
    assert how == "loaded, 4 added from the store" and loaded.ntotal == 8
    assert list(tmp_path.glob("pool-*.faiss")) == [tmp_path / "pool-1.faiss"]


def test_embedder_registry_names_what_is_installed() -> None:
    assert load_embedder("hashing", {"dim": 32}).dim == 32
    with pytest.raises(ValueError, match="unknown embedder 'nope'.*hashing.*minilm"):
        load_embedder("nope")
    with pytest.raises(ValueError, match="rejected options"):
        load_embedder("hashing", {"bogus": 1})


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


def test_ivf_retrains_with_more_lists_as_the_pool_grows() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((1700, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    pool = DedupeIndex(IndexConfig(dim=32, switch_size=100))
    for lo in range(0, 1700, 50):
        pool.add(np.arange(lo + 1, lo + 51), vectors[lo:lo + 50])
    info = pool.describe()
    assert info["kind"] == "ivf" and info["trained_size"] == 1600 and info["ntotal"] == 1700
    pool.index.nprobe = pool.index.nlist  # exhaustive: every vector must still be there
    sims, ids = pool.search(vectors[[0, 777, 1699]], 1)
    assert ids[:, 0].tolist() == [1, 778, 1700]


def test_too_hard_needs_both_windows_unsolved() -> None:
    from envmemory.mastery import MasteryRule, update_stats

    rule = MasteryRule(mastery_rollouts=6, too_hard_rollouts=6)
    # Won unhinted 2 of 3 each time, never hinted (a misleading hint): still the frontier.
    stats, status = {}, "frontier"
    for _ in range(2):
        stats, status = update_stats(stats, status, [0.0] * 3, [0.0, 1.0, 1.0], {}, 0.0, rule)
    assert status == "frontier"
    # Never won either way over both windows: too hard.
    stats, status = {}, "frontier"
    for _ in range(2):
        stats, status = update_stats(stats, status, [0.0] * 3, [0.0] * 3, {}, 0.0, rule)
    assert status == "too_hard"
    # A too-hard window longer than the mastery window still fills with unhinted plays.
    rule = MasteryRule(mastery_rollouts=2, too_hard_rollouts=6)
    stats, status = {}, "frontier"
    for _ in range(2):
        stats, status = update_stats(stats, status, [0.0] * 3, [0.0] * 3, {}, 0.0, rule)
    assert status == "too_hard" and len(stats["recent_unhinted_wins"]) == 6
