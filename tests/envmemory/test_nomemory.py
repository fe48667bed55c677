"""The ``none`` memory (the no-memory ablation): nothing is a duplicate, no prompt examples, the
status rules still apply, and a run with it completes through the real loop and sandbox."""

from __future__ import annotations

import envmemory.plugin as envmemory_plugin
import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from envmemory.nomemory import NoMemory
from spade_core.records import EnvProgram, EnvRecord, EnvStatus

from fakes.selfplay import FakeSelfPlayPlugin, run_real_sandbox_and_memory


def _make_record(source="class AEnv: pass"):
    program = EnvProgram(source=source, family="fake-qa")
    return EnvRecord(id=program.id, source=source, family="fake-qa", status=EnvStatus.FRONTIER)


def test_nothing_is_a_duplicate_and_there_are_no_examples():
    memory = NoMemory()
    record = _make_record()
    memory.add(record)
    memory.add(record)
    assert memory.find_duplicate(EnvProgram(source=record.source, family="fake-qa")) is None
    assert memory.get(record.id).times_proposed == 2
    for _ in range(16):
        memory.update_stats(record.id, 0, [], [1.0], {}, 0.0)
    assert memory.get(record.id).status == EnvStatus.MASTERED
    examples = memory.prompt_examples(2, 1, "fake-qa", None, seed=3)
    assert examples.positive == [] and examples.negative == []
    assert memory.search("anything") == []


def test_a_run_with_memory_none_completes(tmp_path):
    plugin = FakeSelfPlayPlugin(texts=["six times seven", "forty two", "two 21s"])
    run_dir, rows = run_real_sandbox_and_memory(
        tmp_path, (plugin, designer_plugin, estimators_plugin, trainers_plugin), 2,
        {"envs_per_iteration": 2, "rollouts_per_env": 2, "max_turns": 1, "max_attempts": 1,
         "schedule": "window", "regeneration_interval": 1},
        memory="none")
    assert len(rows) == 2 and all(r["envs_played"] == 2 for r in rows)
    assert not (run_dir / "memory").exists()
    assert envmemory_plugin  # registered beside the faiss memory
