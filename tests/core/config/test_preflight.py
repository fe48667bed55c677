"""Preflight (issue 17): ``spade config check`` and ``spade run`` check a config against this
machine (paths, installed extras, settings that must agree) before anything heavy starts, and
plugins contribute the checks."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fakes.cli import ROOT, run_spade
from fakes.all_kinds import FakeAllKinds, FakeOptions
from spade_core.config.load import load_config, resolve_config
from spade_core.config.preflight import preflight, preflight_problems
from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl
from spade_core.plugins import load_plugins
from spade_core.testing import load_test_plugins

QUICKSTART = ROOT / "configs" / "quickstart.yaml"
#: The quickstart without training: no check imports trl, so these tests stay fast.
NO_TRAINING = ["trainer=none"]


@pytest.fixture(scope="module")
def loaded():
    return load_plugins()


def problems(loaded, *overrides: str) -> list[str]:
    resolved = load_config(QUICKSTART, loaded.registry, [*NO_TRAINING, *overrides])
    return preflight_problems(resolved, loaded)


def test_the_quickstart_passes(loaded):
    assert problems(loaded) == []


def test_a_missing_model_is_named_by_its_key(loaded, tmp_path):
    (found,) = problems(loaded, f"model.path={tmp_path / 'no-model'}")
    assert found.startswith("model.path: ") and "no such file or directory" in found
    (found,) = problems(loaded, "model.path=bundled:no-such-model")
    assert found.startswith("model.path: ") and "unknown bundled model" in found
    (found,) = problems(loaded, f"backend.options.model={tmp_path}")
    assert found.startswith("backend.options.model: ") and "no config.json" in found
    (found,) = problems(loaded, "model.path=hf:no-such-org/no-such-model")
    assert "not in the local Hugging Face cache" in found and "never downloads" in found


def test_a_missing_corpus_is_named_by_its_key(loaded, tmp_path):
    (found,) = problems(loaded, f"corpus.options.path={tmp_path / 'nope.jsonl'}")
    assert found.startswith("corpus.options.path: no such file: ")
    (found,) = problems(loaded, f"corpus.options.path={tmp_path}")
    assert found.startswith("corpus.options.path: ") and "is not a file" in found
    (found,) = problems(loaded, "corpus=folder", f"corpus.options.path={tmp_path / 'none'}")
    assert found.startswith("corpus.options.path: no such folder: ")


def test_an_evaluated_suite_without_its_environment_is_found_before_training(
        loaded, tmp_path, monkeypatch):
    monkeypatch.setenv("SPADE_SUITES_DIR", str(tmp_path))
    (found,) = problems(loaded, "eval.suites=[reasoning-gym, gem]")
    assert found.startswith("eval.suites: gem: the gem suite runs on an environment of its own")
    assert "run `spade suites install gem`" in found


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="wandb is installed")
def test_a_logging_backend_that_is_not_installed_names_its_extra(loaded):
    (found,) = problems(loaded, "logging.backends=[wandb]")
    assert found.startswith("logging.backends: ")
    assert "pip install 'spade-rl[wandb]'" in found


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_the_vllm_backend_without_vllm_names_its_extra(loaded):
    (found,) = problems(loaded, "backend=vllm")
    assert found.startswith("backend: ") and "pip install 'spade-rl[gpu]'" in found


def test_temperatures_that_disagree_name_both_keys(loaded):
    resolved = load_config(QUICKSTART, loaded.registry, ["loop.agent_temperature=0.7"])
    (found,) = preflight_problems(resolved, loaded)
    assert found.startswith("trainer.options.temperature and loop.agent_temperature: ")
    assert "0.8 and 0.7 disagree" in found and "another distribution" in found
    resolved = load_config(QUICKSTART, loaded.registry, ["loop.designer_temperature=1.0"])
    (found,) = preflight_problems(resolved, loaded)
    assert "loop.designer_temperature" in found and "train_designer: false" in found
    resolved = load_config(QUICKSTART, loaded.registry, ["loop.designer_temperature=1.0",
                                                         "trainer.options.train_designer=false"])
    assert preflight_problems(resolved, loaded) == []


def test_grpo_config_fields_are_checked_at_config_check(loaded):
    resolved = load_config(QUICKSTART, loaded.registry, ["trainer.options.grpo_config={detla: 1}"])
    (found,) = preflight_problems(resolved, loaded)
    assert found.startswith("trainer.options.grpo_config.detla: ") and "'delta'" in found


def test_every_problem_is_reported_together(loaded, tmp_path):
    resolved = load_config(QUICKSTART, loaded.registry, [
        *NO_TRAINING, f"model.path={tmp_path / 'm'}", f"corpus.options.path={tmp_path / 'c'}"])
    with pytest.raises(ConfigError, match=r"quickstart.yaml: 2 problems: corpus.options.path: .*; "
                                          r"model.path: "):
        preflight(resolved, loaded)


# -- plugins contribute the checks -------------------------------------------------------------

def _config(**changes) -> dict:
    import copy

    from fakes.all_kinds import FAKE_CONFIG

    data = copy.deepcopy(FAKE_CONFIG)
    data.update(changes)
    return data


class Checked:
    """A plugin whose estimators carry preflight checks, one of them broken."""

    seen: dict = {}

    @hookimpl
    def register_difficulty_estimators(self, register):
        def check(options, preflight):
            Checked.seen.update(options=options, where=preflight.where, model=preflight.model)
            return [f"{preflight.where}.size: too small"] if options.size < 5 else []

        def broken(options, preflight):
            raise RuntimeError("boom")

        register("checked", lambda o, c: None, FakeOptions, preflight=check)
        register("broken", lambda o, c: None, FakeOptions, preflight=broken)


def test_a_components_check_receives_its_options_and_preflight_context_and_a_broken_one_is_named():
    loaded = load_test_plugins(FakeAllKinds(), Checked())
    resolved = resolve_config(_config(estimator="checked"), loaded.registry, "t.yaml")
    assert preflight_problems(resolved, loaded) == ["estimator.options.size: too small"]
    assert Checked.seen["where"] == "estimator.options" and Checked.seen["options"].size == 3
    assert Checked.seen["model"] == "bundled:smollm2-135m"
    resolved = resolve_config(_config(estimator="broken"), loaded.registry, "t.yaml")
    (found,) = preflight_problems(resolved, loaded)
    assert found.startswith("estimator: the preflight check of 'broken'") and "boom" in found


def test_hook_spade_preflight():
    """Each spade_preflight implementation is called with the config and a report callback; one
    that raises is named and the others still run."""

    class Good:
        @hookimpl
        def spade_preflight(self, config, report):
            report("run.name", f"checked {config.config.run.name}")

    class Bad:
        @hookimpl
        def spade_preflight(self, config, report):
            raise ValueError("no")

    loaded = load_test_plugins(FakeAllKinds(), Good(), Bad())
    resolved = resolve_config(_config(), loaded.registry, "t.yaml")
    found = preflight_problems(resolved, loaded)
    assert "run.name: checked t" in found
    assert any("spade_preflight hook failed: ValueError: no" in p for p in found)
    with pytest.raises(ConfigError, match="t.yaml: 2 problems: "):
        preflight(resolved, loaded)


# -- the commands --------------------------------------------------------------------------------

def test_config_check_fails_with_the_key_and_schema_only_skips(tmp_path):
    bad = run_spade("config", "check", str(QUICKSTART), "--set", "trainer=none", "--set",
                    f"model.path={tmp_path / 'no-model'}", cwd=tmp_path)
    assert bad.returncode == 2 and "model.path: " in bad.stderr and bad.stdout == ""
    assert f"spade config check {QUICKSTART} --schema-only" in bad.stderr  # the way out
    ok = run_spade("config", "check", str(QUICKSTART), "--set", "trainer=none", "--set",
                   f"model.path={tmp_path / 'no-model'}", "--schema-only", cwd=tmp_path)
    assert ok.returncode == 0 and ": ok" in ok.stdout


def test_run_refuses_before_creating_the_run_directory(tmp_path):
    run_dir = tmp_path / "run"
    result = run_spade("run", str(QUICKSTART), "--set", "trainer=none", "--set",
                       f"run.dir={run_dir}", "--set", f"corpus.options.path={tmp_path / 'c'}",
                       cwd=tmp_path)
    assert result.returncode == 2 and "corpus.options.path: no such file" in result.stderr
    assert "--schema-only" not in result.stderr  # a run cannot skip the checks
    assert not run_dir.exists()
    assert "Traceback" not in result.stderr and Path(tmp_path).is_dir()


def test_the_hints_backend_is_checked_like_the_main_one(loaded, tmp_path):
    (found,) = problems(loaded, "hints.backend.plugin=transformers",
                        f"hints.backend.options.model={tmp_path}")
    assert found.startswith("hints.backend.options.model: ") and "no config.json" in found
    with pytest.raises(ConfigError, match="hints.backend.plugin"):
        problems(loaded, "hints.backend=no-such-backend")


def test_the_validator_backend_is_checked_like_the_main_one(loaded, tmp_path):
    (found,) = problems(loaded, "validation.llm.backend.plugin=transformers",
                        f"validation.llm.backend.options.model={tmp_path}")
    assert found.startswith("validation.llm.backend.options.model: ") and "no config.json" in found
    with pytest.raises(ConfigError, match="validation.llm.backend.plugin"):
        problems(loaded, "validation.llm.backend=no-such-backend")


def test_the_gpu_configs_say_where_their_corpus_comes_from():
    for path in sorted((ROOT / "configs").glob("gpu-*.yaml")):
        header = " ".join(line.lstrip("# ") for line in path.read_text().split("\nrun:")[0]
                          .splitlines())
        assert "data/corpus.jsonl is yours to provide" in header, path
        assert "`text` or `orig_doc`" in header and "docs/corpora.md" in header, path
        assert "spade config check --schema-only" in header, path
