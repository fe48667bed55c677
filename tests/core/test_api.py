"""The Python API (docs/api.md): ``from spade_core import run, load_config, check``, light at
import, running a tiny loop with the fakes of tests/fakes/selfplay.py."""

from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
import sys

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from fakes.cli import ROOT
from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin, RecordingPlugin
from spade_core.errors import ConfigError, SandboxError
from spade_core.testing import load_builtin_plugins, load_test_plugins


def fakes():
    recorder = RecordingPlugin()
    return load_test_plugins(FakeSelfPlayPlugin(), designer_plugin, estimators_plugin,
                             trainers_plugin, recorder), recorder


def test_import_spade_core_stays_light():
    code = ("import sys, spade_core\n"
            "from spade_core import run, load_config, check, load_plugins\n"
            "print([m for m in ('torch', 'transformers', 'trl', 'RestrictedPython', 'faiss') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_unknown_names_are_still_attribute_errors():
    import spade_core

    with pytest.raises(AttributeError, match="no_such_thing"):
        spade_core.no_such_thing  # noqa: B018


def test_run_a_tiny_loop_through_the_api(tmp_path):
    from spade_core import check, load_config, run

    loaded, recorder = fakes()
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    resolved = load_config(data, [f"run.dir={tmp_path / 'run'}", "run.iterations=1"], loaded)
    assert resolved.config.run.iterations == 1 and data["run"] == FAKE_RUN_CONFIG["run"]
    assert check(resolved, loaded) == []
    lines: list[str] = []
    run_dir = run(resolved, plugins=loaded, report=lines.append)
    assert run_dir == tmp_path / "run"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 1
    assert [e[0] for e in recorder.events if e[0] in ("run_start", "run_end")] == \
        ["run_start", "run_end"]
    assert lines[-1].splitlines()[-1].startswith(f"spade: results in {run_dir}")


def test_load_config_reads_files_and_reports_problems(tmp_path):
    from spade_core import load_config

    loaded, _ = fakes()
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps(FAKE_RUN_CONFIG))  # JSON is YAML
    assert load_config(path, ["run.seed=7"], loaded).config.run.seed == 7
    with pytest.raises(ConfigError, match="run.iterations"):
        load_config(FAKE_RUN_CONFIG, ["run.iterations=0"], loaded)


def test_run_refuses_what_preflight_finds(tmp_path):
    from spade_core import run

    loaded, _ = fakes()
    with pytest.raises(ConfigError, match="trainer.options.temperature and "
                                          "loop.agent_temperature"):
        run(FAKE_RUN_CONFIG, plugins=loaded, report=lambda line: None, overrides=[
            f"run.dir={tmp_path / 'run'}", "trainer=grpo", "loop.agent_temperature=0.5",
            "trainer.options.train_designer=false"])
    assert not (tmp_path / "run").exists()


def test_evaluate_runs_the_eval_command_and_returns_its_result(capsys):
    
    from spade_core import evaluate
    from spade_core.cli import main
    from spade_core.hookspecs import hookimpl

    from fakes.eval_backends import FakeWrongBackend

    class FakeBackendPlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-wrong", lambda options, context: FakeWrongBackend())

    loaded = load_builtin_plugins(FakeBackendPlugin())
    config = ROOT / "configs" / "quickstart.yaml"
    result = evaluate(config, ["reasoning-gym"], overrides=["backend=fake-wrong"], limit=4,
                      plugins=loaded)
    [suite] = result["suites"]
    assert suite["suite"] == "reasoning-gym" and suite["overall"]["items"] == 4
    assert suite["overall"]["pass_at_1"] == 0.0
    assert capsys.readouterr().out == ""  # the command's table is not printed
    # The same as `spade eval ... --json` (but for the timing).
    assert main(["eval", str(config), "--suite", "reasoning-gym", "--set", "backend=fake-wrong",
                 "--limit", "4", "--json"], plugins=loaded) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["suites"] == result["suites"] and printed["settings"] == result["settings"]
    # A config already loaded works too.
    again = evaluate(load_config_for(config, loaded), ["reasoning-gym"], limit=4, plugins=loaded)
    assert again["suites"] == result["suites"]


def load_config_for(path, loaded):
    from spade_core import load_config

    return load_config(path, ["backend=fake-wrong"], loaded)


def test_evaluate_without_the_eval_command_says_where_it_comes_from():
    from spade_core import evaluate
    from spade_core.errors import PluginError

    loaded, _ = fakes()
    with pytest.raises(PluginError, match="'eval' command.*'evals'"):
        evaluate(FAKE_RUN_CONFIG, plugins=loaded)


def documented_examples() -> list[str]:
    """The fenced ``python`` blocks of docs/api.md."""
    import re

    text = (ROOT / "docs" / "api.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_documented_examples_use_the_api_as_it_is():
    import inspect
    import re

    import spade_core
    import spade_core.api

    blocks = documented_examples()
    assert len(blocks) >= 2
    for block in blocks:
        for name in re.findall(r"from spade_core import ([\w, ]+)", block):
            for item in name.split(","):
                assert item.strip() in spade_core.__all__, item
        for name in re.findall(r"from spade_core\.api import ([\w, ]+)", block):
            for item in name.split(","):
                assert item.strip() in spade_core.api.__all__, item
    params = inspect.signature(spade_core.evaluate).parameters
    assert {"suites", "limit", "max_new_tokens", "plugins"} <= set(params)
    params = inspect.signature(spade_core.api.open_env).parameters
    assert {"family", "sandbox", "check", "plugins"} <= set(params)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_documented_examples_run(tmp_path, monkeypatch, capsys):
    """Every python block of docs/api.md, for real (the bundled model on CPU), in a scratch
    folder so the run directory lands there."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    namespace: dict = {}
    for block in documented_examples():
        exec(compile(block, "docs/api.md", "exec"), namespace)  # noqa: S102 - our own docs
    assert namespace["problems"] == []
    summary = json.loads((namespace["run_dir"] / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 1
    assert namespace["run_dir"].resolve().is_relative_to(tmp_path.resolve())
    assert [s["suite"] for s in namespace["result"]["suites"]] == ["reasoning-gym"]
    assert "reasoning-gym" in capsys.readouterr().out


# -- open_env: an environment program as a sandboxed gymnasium.Env (issue 17) ---------------------

def _quickstart_program() -> str:
    """The quickstart's kind of program: the reasoning family's level-1 skeleton, filled as the
    skeleton designer fills it."""
    from plugins.designer.skeleton import fill
    from plugins.families.reasoning import CHOICE_EXAMPLES, CHOICE_SKELETON

    return fill(CHOICE_SKELETON, CHOICE_EXAMPLES["logic"][1])



def _sandbox_episode(sandbox, source, family, seed, actions):
    """Observations and rewards the sandbox itself gives for ``actions`` after ``reset(seed)``."""
    session = sandbox.open(source, family=family)
    try:
        first, _ = session.reset(seed)
        steps = []
        for action in actions:
            result = session.step(action)
            steps.append((result.observation, result.reward, result.terminated, result.truncated))
            if result.terminated or result.truncated:
                break
        return first, steps
    finally:
        session.close()


@pytest.mark.parametrize("which", ["quickstart", "grid_escape"])
def test_open_env_plays_with_the_sandbox_rewards(which, process_sandbox):
    import gymnasium

    from spade_core.program_files import installed_families
    from spade_core.api import open_env

    family = installed_families()["reasoning"]
    if which == "quickstart":
        source = _quickstart_program()
    else:
        [program] = [p for p in family.seed_programs() if which in p.description]
        source = program.source
    seed = 3
    session = process_sandbox.open(source, family=family)  # the solution, as validation plays it
    try:
        _, info = session.reset(seed)
        actions = family.solution_actions(session.solution(), family.tools_from_info(info))
    finally:
        session.close()
    with open_env(source) as env:  # the family is detected, as check-env detects it
        assert isinstance(env, gymnasium.Env)
        # The solution, and a wrong answer before it: the rewards differ by step and by episode.
        for played in (actions, ["\\boxed{nonsense}", *actions]):
            first, expected = _sandbox_episode(process_sandbox, source, family, seed, played)
            observation, info = env.reset(seed=seed)
            assert observation == first and info["seed"] == seed
            got = []
            for action in played:
                observation, reward, terminated, truncated, _ = env.step(action)
                got.append((observation, reward, terminated, truncated))
                if terminated or truncated:
                    break
            assert got == expected, played
            if played is actions:
                assert got[-1][1] > 0 and got[-1][2], "the solution earns its reward"


def test_open_env_reads_a_file_and_takes_a_family(tmp_path, process_sandbox):
    from spade_core.api import open_env

    path = ROOT / "plugins" / "families" / "seeds" / "reasoning" / "code_breaker.py"
    # Self-contained, but it never ends in the plain SPADE game format: the reasoning family,
    # whose solution format it uses, is chosen, as check-env chooses it.
    for family in (None, "reasoning"):
        with open_env(path, family, render_mode="ansi") as env:
            observation, _ = env.reset(seed=1)
            assert observation and env.render() == observation
    endless = tmp_path / "endless.py"
    endless.write_text("class EndlessEnv:\n    def reset(self, seed=None):\n"
                       "        return 'go', {}\n\n    def step(self, action):\n"
                       "        return 'go', 0.0, False, False, {}\n\n"
                       "    def solution(self):\n        return 'go'\n")
    with pytest.raises(SandboxError, match=r"endless\.py\) is not a valid environment program "
                                           r"in the plain SPADE game format.*family=NAME"):
        open_env(endless)
    from spade_core.program_files import installed_families

    first, _ = _sandbox_episode(process_sandbox, path.read_text(),
                                installed_families()["reasoning"], 1, [])
    assert observation == first


def test_a_broken_program_is_a_clear_error(tmp_path):
    from spade_core.api import open_env

    with pytest.raises(SandboxError) as caught:
        open_env("class BrokenEnv:\n    def reset(self, seed=None):\n        return 1 / 0, {}\n")
    assert caught.value.verdict.category == "runtime_error"
    assert "open_env(<program text>) is not a valid environment program" in str(caught.value)
    assert "ZeroDivisionError" in str(caught.value)
    with pytest.raises(FileNotFoundError, match="no_such.py: no such file"):
        open_env(tmp_path / "no_such.py")
    with pytest.raises(ConfigError, match="unknown env family 'nope'|'nope'"):
        open_env(_quickstart_program(), "nope")
    # It uses tool-use's injected base class, but tool-use's static checks refuse it.
    with pytest.raises(ConfigError, match="names injected by family 'tool-use'.*family=NAME"):
        open_env("class E(ToolUseBaseEnv):\n    pass\n")


def test_open_env_with_check_false_fails_at_reset(process_sandbox):
    from spade_core.api import open_env

    env = open_env("class BrokenEnv:\n    def reset(self, seed=None):\n        return 1 / 0, {}\n"
                   "    def step(self, action):\n        return '', 0.0, True, False, {}\n",
                   check=False)
    try:
        with pytest.raises(SandboxError, match="ZeroDivisionError"):
            env.reset(seed=0)
    finally:
        env.close()
    env.close()  # twice is harmless


def _watched_sandbox(closed: list) -> tuple:
    """The fake plugins with the families, their sandbox's name, and that sandbox's ``close``
    recorded in ``closed``."""
    import plugins.families.plugin as families_plugin

    from fakes.selfplay import FakeSelfPlayPlugin

    loaded = load_test_plugins(FakeSelfPlayPlugin(), families_plugin)
    [sandbox] = loaded.registry.names("sandbox")
    component = loaded.registry.components[("sandbox", sandbox)]
    original = component.factory

    def factory(options, context):
        built = original(options, context)
        close = built.close
        built.close = lambda: (closed.append(True), close())
        return built

    loaded.registry.components[("sandbox", sandbox)] = dataclasses.replace(component,
                                                                           factory=factory)
    return loaded, sandbox


def test_open_env_stops_its_sandbox_when_the_env_cannot_be_made():
    """When the env cannot be made (here: an unknown render mode), open_env says why and stops
    the sandbox it built. The adapter is the core's: no plugin beyond the sandbox and the
    families is needed."""
    from spade_core.api import open_env

    closed = []
    loaded, sandbox = _watched_sandbox(closed)
    with pytest.raises(ValueError, match="render_mode"):
        open_env(_quickstart_program(), sandbox=sandbox, check=False, plugins=loaded,
                 render_mode="human")
    assert closed == [True]


def test_open_env_passes_the_env_options_and_its_close_stops_the_sandbox():
    """The env options reach the env; closing the env stops the sandbox open_env built, once."""
    from spade_core.api import open_env
    from spade_core.gym_env import SandboxTextEnv

    closed = []
    loaded, sandbox = _watched_sandbox(closed)
    env = open_env(_quickstart_program(), sandbox=sandbox, check=False, plugins=loaded,
                   render_mode="ansi", max_action_chars=99)
    assert isinstance(env, SandboxTextEnv) and env.render_mode == "ansi"
    assert env.action_space.max_length == 99 and closed == []
    env.close()
    env.close()
    assert closed == [True]


def test_the_open_env_example_runs():
    """The open_env block of docs/api.md (the process sandbox, no model)."""
    [block] = [b for b in documented_examples() if "open_env" in b]
    namespace: dict = {}
    exec(compile(block, "docs/api.md", "exec"), namespace)  # noqa: S102 - our own docs
    assert namespace["reward"] == 1.0 and namespace["terminated"] is True


def test_check_programs_chooses_families_and_keeps_the_order():
    """``check_programs`` (what ``spade check-env`` calls): each program's family as check-env
    chooses it, verdicts in the order given, a file that is not text refused without the sandbox."""
    from spade_core.api import check_programs

    broken = "class BrokenEnv(ToolUseBaseEnv):\n    pass\n"
    found = check_programs([("quick", _quickstart_program()), ("binary", None),
                            ("broken", broken)])
    assert found.isolation.get("method")
    quick, binary, refused = found.checks
    assert (quick.label, quick.family, quick.verdict.valid) == ("quick", "reasoning", True)
    assert (binary.family, binary.verdict.category) == (None, "syntax")
    assert refused.family == "tool-use" and not refused.verdict.valid  # by its injected base
    forced = check_programs([("quick", _quickstart_program())], ["reasoning"]).checks[0]
    assert forced.family == "reasoning" and forced.verdict.valid


def test_import_programs_stores_valid_and_rejected_programs(tmp_path):
    """``import_programs`` (what ``spade envs import`` calls): valid programs enter the memory as
    frontier, invalid ones as rejected with their verdict."""
    from spade_core.api import import_programs, load_plugins
    from spade_core.components import BuildContext

    loaded = load_plugins()
    checks = import_programs([("quick", _quickstart_program(), "a quiz"),
                              ("junk", "x = (", "")], tmp_path / "run",
                             memory_options={"embedder": "hashing"}, plugins=loaded)
    assert [c.verdict.valid for c in checks] == [True, False]
    memory = loaded.registry.build("env_memory", "faiss", {"embedder": "hashing"}, "test",
                                   BuildContext(run_dir=tmp_path / "run"))
    try:
        statuses = sorted(r.status for r in memory.records())
    finally:
        memory.close()
    assert statuses == ["frontier", "rejected"]
