"""spade_core/gym_registry.py: the playable records of a memory registered with gymnasium under
``<namespace>/<family>-<id>-v0``, and one sandbox built on first use, shared and closed."""

from __future__ import annotations

from types import SimpleNamespace

import spade_core.gym_env as gym_env
from spade_core.gym_registry import SharedSandbox, env_id, register_records


def _record(id_, family, status):
    return SimpleNamespace(id=id_, family=family, status=status, source=f"# {id_}\n")


def test_only_playable_records_of_known_families_are_registered(monkeypatch):
    calls = []
    monkeypatch.setattr(gym_env, "register_program",
                        lambda name, source, **kw: calls.append((name, source, kw)))
    records = [_record("a1", "reasoning", "frontier"), _record("b2", "reasoning", "too_hard"),
               _record("c3", "tool-use", "mastered"), _record("d4", "other", "frontier")]
    factory = object()
    families = {"reasoning": "R", "tool-use": "T"}
    ids = register_records(records, families=families, sandbox_factory=factory,
                           namespace="mine", max_episode_steps=7)
    assert ids == ["mine/reasoning-a1-v0", "mine/tool-use-c3-v0"]
    assert [(c[0], c[1], c[2]["family"]) for c in calls] == [
        ("mine/reasoning-a1-v0", "# a1\n", "R"), ("mine/tool-use-c3-v0", "# c3\n", "T")]
    assert calls[0][2]["sandbox_factory"] is factory and calls[0][2]["max_episode_steps"] == 7
    assert env_id(records[0]) == "spade/reasoning-a1-v0"


def test_the_shared_sandbox_is_built_once_and_closed():
    shared = SharedSandbox("process", {"workers": 1})
    box = shared()
    try:
        assert shared() is box
    finally:
        shared.close()
    assert shared._sandbox is None
    shared.close()  # closing twice is harmless
