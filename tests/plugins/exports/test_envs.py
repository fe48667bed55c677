"""``spade envs export``: a run's environments as JSONL, a
``datasets`` dataset, an OpenEnv environment and a verifiers environment; each is loaded with its
own library and plays the program's solution through the ``process`` sandbox with the rewards our
sandbox gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily

SEED = 3


def _programs():
    """Two seed programs of each family: one-step and multi-step, plain and tool-use."""
    return [(family, program) for family in (ReasoningFamily(), ToolUseFamily())
            for program in family.seed_programs()[:2]]


@pytest.fixture(scope="module")
def sandbox():
    from spade_core.components import BuildContext
    from spade_core.plugins import load_plugins

    component = load_plugins().registry.components.get(("sandbox", "process"))
    if component is None:
        pytest.skip("no sandbox named 'process' is registered")
    built = component.build(component.options() if component.options else {}, BuildContext())
    yield built
    built.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """What `spade envs import` leaves: a memory of frontier records, plus one rejected."""
    import envmemory.plugin as memory_plugin
    from envmemory.options import MemoryOptions
    from spade_core.components import BuildContext
    from spade_core.records import EnvRecord, program_id

    root = tmp_path_factory.mktemp("run")
    memory = memory_plugin.build_memory(MemoryOptions(embedder="hashing"),
                                        BuildContext(run_dir=root))
    for family, program in _programs():
        memory.add(EnvRecord(id=program_id(program.source), source=program.source,
                             family=family.name, status="frontier",
                             description=program.description))
    bad = "class BrokenEnv:\n    pass\n"
    memory.add(EnvRecord(id=program_id(bad), source=bad, family="reasoning", status="rejected"))
    memory.close()
    return root


def _ours(sandbox, row) -> tuple[list[str], list[float]]:
    """The solution's actions and the rewards our sandbox gives for them on SEED."""
    from spade_core.program_files import installed_families

    family = installed_families()[row["family"]]
    session = sandbox.open(row["source"], family=family)
    try:
        _, info = session.reset(SEED)
        actions = family.solution_actions(session.solution(), family.tools_from_info(info))
        assert actions, f"{row['description']}: no replayable solution"
        rewards = []
        for action in actions:
            result = session.step(action)
            rewards.append(float(result.reward))
            if result.terminated or result.truncated:
                break
        assert any(r > 0 for r in rewards), f"{row['description']}: the solution earns nothing"
        return actions[:len(rewards)], rewards
    finally:
        session.close()


#: The command (its pre-release alias ``export-envs`` is gone).
SPELLINGS = (("envs", "export"),)


def _export(run_dir, out, fmt, *extra, command=SPELLINGS[0]) -> int:
    from spade_core.cli import main

    return main([*command, str(run_dir), "--format", fmt, "--out", str(out), *extra])


@pytest.mark.parametrize("command", SPELLINGS, ids=" ".join)
def test_both_spellings_export_the_same(run_dir, tmp_path, command, capsys):
    assert _export(run_dir, tmp_path / "j", "jsonl", "--json", command=command) == 0
    result = json.loads(capsys.readouterr().out)
    assert result == {"out": str(tmp_path / "j"), "format": "jsonl", "environments": 4}
    assert len((tmp_path / "j" / "environments.jsonl").read_text().splitlines()) == 4


@pytest.mark.parametrize("command", SPELLINGS, ids=" ".join)
def test_both_spellings_on_the_command_line(run_dir, tmp_path, command):
    """As a user types it: the installed plugin's member of the core ``envs`` group."""
    from fakes.cli import run_spade

    result = run_spade(*command, "--help")
    assert result.returncode == 0 and "--format" in result.stdout, result.stderr
    assert f"usage: spade {' '.join(command)}" in result.stdout
    result = run_spade(*command, str(run_dir), "--format", "jsonl", "--out", str(tmp_path / "x"),
                       "--status", "rejected")
    assert result.returncode == 0, result.stderr
    assert "exported 1 environment as jsonl" in result.stdout


def test_jsonl_holds_the_playable_records(run_dir, tmp_path):
    assert _export(run_dir, tmp_path / "j", "jsonl") == 0
    rows = [json.loads(line) for line in
            (tmp_path / "j" / "environments.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and {r["status"] for r in rows} == {"frontier"}
    assert {r["family"] for r in rows} == {"reasoning", "tool-use"}
    assert all(r["source"] and r["instructions"] for r in rows)
    assert _export(run_dir, tmp_path / "r", "jsonl", "--status", "rejected") == 0
    rejected = (tmp_path / "r" / "environments.jsonl").read_text().splitlines()
    assert len(rejected) == 1 and "BrokenEnv" in rejected[0]
    assert _export(run_dir, tmp_path / "r", "jsonl") == 2  # the folder is not empty now


def test_hook_register_export_formats():
    """The built-in formats register through the hook like any plugin's, and honour the base
    class."""
    import plugins.exports.plugin as exports_plugin
    from spade_core.interfaces import ExportFormat
    from spade_core.testing import check_component, load_test_plugins

    loaded = load_test_plugins(exports_plugin)
    assert loaded.registry.names("export_format") == ["hf-dataset", "jsonl", "openenv",
                                                      "verifiers"]
    for name in loaded.registry.names("export_format"):
        assert isinstance(check_component(loaded, "export_format", name), ExportFormat)


def test_a_plugin_adds_an_export_format(run_dir, tmp_path, capsys):
    """A third-party format is chosen with --format like a built-in one; an unknown name is an
    error listing the installed formats."""
    from spade_core.cli import main
    from spade_core.hookspecs import hookimpl
    from spade_core.interfaces import ExportFormat
    from spade_core.testing import load_builtin_plugins

    class IdsFormat(ExportFormat):
        def write(self, rows, out, *, sandbox):
            (out / "ids.txt").write_text("\n".join(r["id"] for r in rows) + "\n")

    class IdsPlugin:
        @hookimpl
        def register_export_formats(self, register):
            register("ids", lambda options, context: IdsFormat(), None, "ids, one a line")

    loaded = load_builtin_plugins(IdsPlugin())
    out = tmp_path / "ids"
    assert main(["envs", "export", str(run_dir), "--format", "ids", "--out", str(out)],
                plugins=loaded) == 0
    assert len((out / "ids.txt").read_text().split()) == 4
    capsys.readouterr()
    assert main(["envs", "export", str(run_dir), "--format", "idz", "--out",
                 str(tmp_path / "x")], plugins=loaded) == 2
    err = capsys.readouterr().err
    assert "unknown export format 'idz'" in err and "ids" in err and "jsonl" in err
    assert not (tmp_path / "x").exists()


def test_hf_dataset_loads_with_datasets(run_dir, tmp_path):
    from datasets import load_from_disk

    assert _export(run_dir, tmp_path / "d", "hf-dataset", "--family", "reasoning") == 0
    dataset = load_from_disk(str(tmp_path / "d"))
    assert len(dataset) == 2 and set(dataset["family"]) == {"reasoning"}
    assert "source" in dataset.column_names and "class" in dataset[0]["source"]
    assert _export(run_dir, tmp_path / "e", "hf-dataset", "--status", "mastered") == 0
    assert len(load_from_disk(str(tmp_path / "e"))) == 0


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


def test_verifiers_packages_are_named_after_the_run_and_iteration(run_dir, tmp_path, capsys):
    """Two exports of different runs (or iterations) install side by side; --name overrides."""
    import shutil
    import tomllib

    from plugins.exports.formats import package_name

    def exported(source, out, *extra):
        assert _export(source, out, "verifiers", "--json", *extra) == 0
        name = json.loads(capsys.readouterr().out)["name"]
        project = tomllib.loads((out / "pyproject.toml").read_text())
        assert project["project"]["name"] == name.replace("_", "-")
        assert project["tool"]["setuptools"]["packages"] == [name]
        assert f'id: str = "{name}"' in (out / name / "__init__.py").read_text()
        return name

    later = tmp_path / "later run"
    shutil.copytree(run_dir, later)
    (later / "config.resolved.yaml").write_text("run: {name: Qwen-7b.selfplay}\n")
    (later / "metrics.jsonl").write_text('{"iteration": 0}\n{"iteration": 11}\n')
    assert package_name(later) == "spade_qwen_7b_selfplay_iter11"
    first = exported(run_dir, tmp_path / "a")
    second = exported(later, tmp_path / "b")
    assert first == package_name(run_dir) and second == "spade_qwen_7b_selfplay_iter11"
    assert exported(later, tmp_path / "c", "--name", "my_envs") == "my_envs"
    assert _export(run_dir, tmp_path / "d", "jsonl", "--name", "x") == 2
    assert "--name is for verifiers" in capsys.readouterr().err
    assert _export(run_dir, tmp_path / "e", "verifiers", "--name", "Not-an-identifier") == 2
    assert "String should match pattern" in capsys.readouterr().err


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
