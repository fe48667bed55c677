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
