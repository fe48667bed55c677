"""``envs export --format verifiers``: the package loads with verifiers and plays each exported
program with the rewards our sandbox gives, also through verifiers' own ``vf-eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.exported_envs import SEED
from fakes.exported_envs import export as _export
from fakes.exported_envs import ours as _ours
from fakes.exported_envs import programs as _programs


class _ScriptedInteraction:
    """Stands in for a verifiers agent's interaction: replies with the given actions."""

    def __init__(self, replies):
        from types import SimpleNamespace

        self.replies, self.seen = list(replies), []
        self.trace = SimpleNamespace(rewards={}, info={},
                                     record_reward=lambda n, v, w=1.0: self.trace.rewards
                                     .__setitem__(n, v))

    async def turn(self, message=None):
        from types import SimpleNamespace

        self.seen.append(message)
        if not self.replies:
            return SimpleNamespace(terminated=True, last_reply="")
        return SimpleNamespace(terminated=False, last_reply=self.replies.pop(0))


class _ScriptedPlayer:
    def __init__(self, replies):
        self.interaction_ = _ScriptedInteraction(replies)

    def interaction(self, task):
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def opened():
            yield self.interaction_

        return opened()


@pytest.mark.slow
def test_verifiers_export_loads_and_plays_with_our_rewards(run_dir, tmp_path, sandbox,
                                                           monkeypatch):
    pytest.importorskip("verifiers.v1.tasksets", reason="verifiers is not importable here",
                        exc_type=ImportError)
    import asyncio
    import sys
    from types import SimpleNamespace

    import verifiers.v1 as vf

    out = tmp_path / "v"
    assert _export(run_dir, out, "verifiers", "--name", "spade_envs") == 0
    assert (out / "pyproject.toml").is_file()
    monkeypatch.syspath_prepend(str(out))  # as `pip install out` would make it importable
    import spade_envs

    env = spade_envs.load_environment(seed=SEED)
    assert isinstance(env, vf.Env) and type(env).__name__ == "SpadeEnv"
    tasks = list(env.taskset)
    assert len(tasks) == 4
    for task in tasks:
        row = {"family": task.data.info["family"], "source": task.data.info["source"],
               "description": task.data.description}
        actions, expected = _ours(sandbox, row)
        assert task.data.prompt and task.data.system_prompt
        player = _ScriptedPlayer(actions)
        asyncio.run(env.run(task, SimpleNamespace(player=player)))
        trace = player.interaction_.trace
        assert trace.info["step_rewards"] == expected, row["description"]
        assert trace.rewards["episode_return"] == sum(expected)
    sys.modules.pop("spade_envs", None)


@pytest.mark.slow
def test_vf_eval_plays_an_exported_package_against_a_local_server(tmp_path, sandbox):
    """docs/exports.md's recipe, as written: verifiers' own `vf-eval` plays the exported package
    against an OpenAI-compatible server on this machine, and the rewards are our sandbox's."""
    import os
    import shutil
    import subprocess
    import sys

    import envmemory.plugin as memory_plugin
    from envmemory.options import MemoryOptions
    from fakes.openai_server import OpenAITestServer
    from spade_core.components import BuildContext
    from spade_core.interfaces import GenerationBackend
    from spade_core.interfaces.backend import Generation
    from spade_core.records import EnvRecord, program_id

    vf_eval = shutil.which("vf-eval", path=str(Path(sys.executable).parent))
    if vf_eval is None:
        pytest.skip("verifiers' vf-eval is not installed")
    family, program = _programs()[0]
    run = tmp_path / "run"
    memory = memory_plugin.build_memory(MemoryOptions(embedder="hashing"),
                                        BuildContext(run_dir=run))
    memory.add(EnvRecord(id=program_id(program.source), source=program.source,
                         family=family.name, status="frontier", description=program.description))
    memory.close()
    actions, expected = _ours(sandbox, {"family": family.name, "source": program.source,
                                        "description": program.description})

    class FakeSolver(GenerationBackend):
        """Answers with the solution's actions, one per request."""

        def __init__(self):
            self.replies = list(actions)

        def generate(self, conversations, **kwargs):  # noqa: ANN001, ANN003, ANN201
            return [Generation(text=self.replies.pop(0) if self.replies else "",
                               prompt_ids=[1], completion_ids=[2]) for _ in conversations]

    out = tmp_path / "pkg"
    assert _export(run, out, "verifiers", "--name", "spade_demo_iter3") == 0
    with OpenAITestServer(FakeSolver(), model_name="local-model") as server:
        env = dict(os.environ, OPENAI_API_KEY="none",
                   PYTHONPATH=os.pathsep.join([str(out), *sys.path]))  # as `pip install`
        result = subprocess.run(
            [vf_eval, "spade_demo_iter3", "-m", "local-model", "--client.base-url", server.url,
             "--client.api-key-var", "OPENAI_API_KEY", "--env.player.harness.id", "null",
             "--env.player.runtime.type", "subprocess", "--env.taskset.seed", str(SEED),
             "-r", "1", "-c", "1", "--no-push",
             "-o", str(tmp_path / "outputs")],
            env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    [traces] = list((tmp_path / "outputs").glob("*/traces.jsonl"))
    [trace] = json.loads(traces.read_text().splitlines()[0])["traces"]
    assert trace["errors"] == [] and trace["info"]["step_rewards"] == expected
    assert trace["rewards"]["episode_return"]["score"] == sum(expected)
