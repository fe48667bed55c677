"""The Python API (docs/api.md): ``from spade_core import run, load_config, check``, light at
import, running a tiny loop with the fakes of tests/fake_selfplay.py."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from conftest import ROOT
from fake_selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin, RecordingPlugin
from spade_core.errors import ConfigError
from spade_core.testing import load_test_plugins


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
    from importlib import metadata

    from spade_core import evaluate
    from spade_core.cli import main
    from spade_core.hookspecs import hookimpl

    from plugins.evals.fakes import FakeWrongBackend

    class FakeBackendPlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-wrong", lambda options, context: FakeWrongBackend())

    builtins = [ep.load() for ep in metadata.entry_points(group="spade")
                if ep.dist is not None and ep.dist.name == "spade-rl"]
    loaded = load_test_plugins(*builtins, FakeBackendPlugin())
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

    blocks = documented_examples()
    assert len(blocks) >= 2
    for block in blocks:
        for name in re.findall(r"from spade_core import ([\w, ]+)", block):
            for item in name.split(","):
                assert item.strip() in spade_core.__all__, item
    params = inspect.signature(spade_core.evaluate).parameters
    assert {"suites", "limit", "max_new_tokens", "plugins"} <= set(params)


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
