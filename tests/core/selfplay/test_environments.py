"""Environments played again and retired (spade_core.selfplay.environments): the draws
(``draw_replay``, ``draw_from_pool``, ``window_replays``) on a fake memory; then, in the frontier
schedule, with the real process sandbox and the real FAISS memory: an environment proposed once
is played again in later iterations, its statistics accumulate until it is mastered, it leaves
the frontier, and a later near-duplicate proposal of it is refused by the memory's embedding
dedupe. The agent is a scripted test fake whose success on an environment rises with the number
of episodes of it it has played."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from spade_core.config.schema import LoopSection
from spade_core.phases import PhaseTimer
from spade_core.records import EnvRecord, EnvStatus, program_id
from spade_core.selfplay.environments import draw_from_pool, draw_replay, window_replays

from fakes.selfplay import FakeDictMemory, FakeFamily, qa_program, replay_run


NAMES = ("low", "high", "fresh", "done", "alien")
#: Each environment's id (its program's), by name.
ID = {name: program_id(qa_program(name)) for name in NAMES}


def _names(proposals) -> list[str]:
    return [next(n for n, i in ID.items() if i == p.env_id) for p in proposals]


def _memory() -> FakeDictMemory:
    """Frontier environments ``low`` (played twice, designer reward 0.2, a hint), ``high``
    (played once, 0.9, a step timed out at iteration 3) and ``fresh`` (never played); ``done``
    (mastered) and ``alien`` (another family's)."""
    memory = FakeDictMemory()
    for name, status, family in (("low", EnvStatus.FRONTIER, "fake-qa"),
                                 ("high", EnvStatus.FRONTIER, "fake-qa"),
                                 ("fresh", EnvStatus.FRONTIER, "fake-qa"),
                                 ("done", EnvStatus.MASTERED, "fake-qa"),
                                 ("alien", EnvStatus.FRONTIER, "other")):
        memory.add(EnvRecord(id=ID[name], source=qa_program(name), family=family, status=status,
                             hint=f"hint of {name}", description=name))
    memory.update_stats(ID["low"], 2, [1.0], [0.0], {}, 0.1)
    memory.update_stats(ID["low"], 3, [], [0.0], {}, 0.2)
    memory.update_stats(ID["high"], 3, [1.0, 0.0], [0.0], {"step_timeouts": 1.0}, 0.9)
    memory.update_stats(ID["alien"], 3, [1.0], [0.0], {}, 1.0)
    memory.set_status(ID["done"], EnvStatus.MASTERED)
    return memory


def _components():
    return SimpleNamespace(memory=_memory(), families=[FakeFamily()])


def test_draw_replay_takes_played_frontier_environments_of_the_runs_families_best_first():
    c, timer = _components(), PhaseTimer()
    replays = draw_replay(c, LoopSection(replay_envs=4), set(), seed=0, timer=timer)
    assert _names(replays) == ["high", "low"]  # by last designer reward
    assert all(p.replayed and p.status == EnvStatus.FRONTIER and p.verdict.valid
               for p in replays)
    assert replays[0].hint == "hint of high" and replays[0].program == qa_program("high")
    assert _names(draw_replay(c, LoopSection(replay_envs=4), {ID["high"]}, 0, timer)) == ["low"]
    assert _names(draw_replay(c, LoopSection(replay_envs=4, replay_max_age=2), set(), 0,
                              timer)) == ["high"]  # low has been played twice: too old
    assert draw_replay(c, LoopSection(replay_envs=0), set(), 0, timer) == []


def test_draw_from_pool_plays_the_unplayed_first_then_replays():
    c = _components()
    drawn = draw_from_pool(c, LoopSection(envs_per_iteration=1, replay_envs=1), seed=0,
                           timer=PhaseTimer())
    assert _names(drawn) == ["fresh", "high"] and [p.replayed for p in drawn] == [False, True]
    assert drawn[0].hint == ""  # a pool entry's first play gets a fresh hint
    chosen = draw_from_pool(c, LoopSection(), 0, PhaseTimer(),
                            chosen=[ID["done"], ID["alien"], ID["low"]])
    assert _names(chosen) == ["done", "low"] and not any(p.replayed for p in chosen)


def test_window_replays_replay_the_windows_environments_with_their_start_hints():
    c = _components()
    replays = window_replays(c, [ID["low"], ID["high"], ID["alien"], "gone"], start=3)
    assert _names(replays) == ["low", "high"]
    assert [p.hint_rewards for p in replays] == [[], [1.0, 0.0]]  # low had no hinted play at 3
    kept = window_replays(c, [ID["low"], ID["high"]], start=3, drop_timed_out=True)
    assert _names(kept) == ["low"]  # high timed out in the window

_run = replay_run


@pytest.mark.slow
def test_replayed_environments_become_mastered_and_their_near_duplicates_are_refused(tmp_path):
    run_dir, rows = _run(tmp_path)
    assert [r["envs_replayed"] for r in rows] == [0, 1, 1]
    assert [r["envs_mastered"] for r in rows] == [0, 1, 1]
    assert [r["envs_mastered_total"] for r in rows] == [0, 1, 2]
    assert rows[0]["frontier_size"] == 1 and rows[1]["frontier_size"] == 1
    assert rows[2]["envs_duplicate"] == 1 and rows[2]["dedupe_hits"] == 1
    replays = [json.loads(line) for line in (run_dir / "replays.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in replays] == [1, 2]
    assert all(r["status"] == EnvStatus.MASTERED for r in replays)
    assert replays[0]["unhinted_rewards"] == [1.0, 1.0]  # learned by practice, not by the hint
    first = json.loads((run_dir / "envs" / f"{replays[0]['id']}.json").read_text())
    assert first["iteration"] == 0 and first["designer_completion"]  # the proposal is kept
    refused = [json.loads(p.read_text()) for p in (run_dir / "envs").glob("*.json")]
    [duplicate] = [e for e in refused if e["status"] == "duplicate"]
    assert duplicate["duplicate_of"] == replays[0]["id"]
    assert duplicate["duplicate_similarity"] < 1.0  # by embedding, not the same program


@pytest.mark.slow
def test_an_environment_past_its_age_retires(tmp_path):
    _, rows = _run(tmp_path, replay_max_age=1)
    assert all(r["envs_replayed"] == 0 for r in rows)
    assert [r["envs_retired"] for r in rows] == [1, 1, 1]
    assert all(r["frontier_size"] == 0 for r in rows)
