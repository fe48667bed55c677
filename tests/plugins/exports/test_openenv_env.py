"""The OpenEnv environment over exported rows: it needs rows, picks one by id (an unknown id is
refused before any sandbox work) and steps only after a reset. Playing it is in
test_openenv_export.py."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openenv.core.env_server", reason="openenv is not importable here",
                    exc_type=ImportError)

from plugins.exports.openenv_env import SpadeAction, SpadeEnvironment  # noqa: E402


def test_rows_are_needed_an_unknown_id_is_refused_and_a_step_needs_a_reset(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ValueError, match="no exported environments"):
        SpadeEnvironment(empty)
    rows = tmp_path / "environments.jsonl"
    rows.write_text("".join(json.dumps({"id": i, "family": "reasoning", "source": ""}) + "\n"
                            for i in ("a", "b")))
    env = SpadeEnvironment(rows)
    assert [row["id"] for row in env.rows] == ["a", "b"]
    with pytest.raises(ValueError, match="no exported environment with id 'c'"):
        env.reset(seed=1, env_id="c")
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(SpadeAction(message="1"))
    env.close()
