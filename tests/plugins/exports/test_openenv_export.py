"""``envs export --format openenv``: the folder OpenEnv tooling loads, whose environment plays each
exported program with the rewards our sandbox gives."""

from __future__ import annotations

import pytest

from fakes.exported_envs import SEED
from fakes.exported_envs import export as _export
from fakes.exported_envs import ours as _ours


@pytest.mark.slow
def test_openenv_export_plays_with_our_rewards(run_dir, tmp_path, sandbox):
    # `make test` installs openenv-core 0.3.0 next to verifiers 0.4.0 (docs/exports.md); an
    # environment without it skips.
    pytest.importorskip("openenv.core.env_server", reason="openenv is not importable here",
                        exc_type=ImportError)
    import importlib.util

    out = tmp_path / "o"
    assert _export(run_dir, out, "openenv") == 0
    assert (out / "openenv.yaml").is_file()
    spec = importlib.util.spec_from_file_location("exported_app", out / "server" / "app.py")
    app_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app_module)  # builds the FastAPI app as `uvicorn` would
    from openenv.core.env_server.interfaces import Environment

    env = app_module.make_env()
    assert isinstance(env, Environment)
    try:
        for row in env.rows:
            actions, expected = _ours(sandbox, row)
            observation = env.reset(seed=SEED, env_id=row["id"])
            assert observation.text and not observation.done
            rewards = []
            for action in actions:
                observation = env.step(app_module.SpadeAction(message=action))
                rewards.append(observation.reward)
            assert rewards == expected and observation.done, row["description"]
            assert env.state.step_count == len(actions)
    finally:
        env.close()
