"""Plugin loading through entry points: built-ins, third parties, broken and clashing plugins."""

from __future__ import annotations

import json

import pytest

from spade_core.components import KINDS
from spade_core.testing import check_component, load_test_plugins

from fakes.cli import run_spade
from fakes.all_kinds import FakeAllKinds
from fakes.plugin_dists import GOOD_ESTIMATOR, make_dist


def plugins_json(env=None):
    result = run_spade("plugins", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_builtins_listed_with_kind_distribution_version():
    rows = plugins_json()
    estimators = {r["name"]: r for r in rows if r["kind"] == "difficulty_estimator"}
    assert {"regret", "blend", "learnability", "solve-rate", "learning-progress",
            "learning-progress-per-step", "frontier"} <= set(estimators)
    for row in estimators.values():
        assert row["distribution"] == "spade-rl" and row["version"] and row["error"] is None
    assert not [r for r in rows if r["error"] and r["distribution"] == "spade-rl"], rows


@pytest.fixture
def site(tmp_path):
    return tmp_path / "site"


def test_third_party_and_broken_plugins(site):
    make_dist(site, "spade-half", "1.2.3", {"spade_half": GOOD_ESTIMATOR},
              {"half": "spade_half"})
    make_dist(site, "spade-broken", "0.0.1",
              {"spade_broken": "raise RuntimeError('boom at import')\n"},
              {"broken": "spade_broken"})
    make_dist(site, "spade-exits", "0.1", {"spade_exits": "import sys\nsys.exit(3)\n"},
              {"exits": "spade_exits"})
    rows = plugins_json({"PYTHONPATH": str(site)})
    half = [r for r in rows if r["name"] == "half"]
    assert half and half[0]["kind"] == "difficulty_estimator"
    assert half[0]["distribution"] == "spade-half" and half[0]["version"] == "1.2.3"
    broken = [r for r in rows if r["name"] == "broken"][0]
    assert broken["distribution"] == "spade-broken" and broken["version"] == "0.0.1"
    assert "RuntimeError: boom at import" in broken["error"]
    exits = [r for r in rows if r["name"] == "exits"][0]
    assert "SystemExit" in exits["error"]
    # Built-ins still work next to the broken plugin.
    assert any(r["name"] == "regret" and not r["error"] for r in rows)


def test_misspelled_hook_is_an_error(site):
    source = ("from spade_core.hookspecs import hookimpl\n"
              "@hookimpl\ndef register_difficulty_estimator(register):\n    pass\n")
    make_dist(site, "spade-typo", "1.0", {"spade_typo": source}, {"typo": "spade_typo"})
    row = [r for r in plugins_json({"PYTHONPATH": str(site)}) if r["name"] == "typo"][0]
    assert "unknown hook(s) register_difficulty_estimator" in row["error"]
    assert "register_difficulty_estimators" in row["error"]  # the known names are listed


def test_wrong_hook_argument_is_an_error(site):
    source = ("from spade_core.hookspecs import hookimpl\n"
              "@hookimpl\ndef register_sandboxes(registrar):\n    pass\n")
    make_dist(site, "spade-args", "1.0", {"spade_args": source}, {"args": "spade_args"})
    row = [r for r in plugins_json({"PYTHONPATH": str(site)}) if r["name"] == "args"][0]
    assert "registrar" in row["error"]


def test_register_hook_raising_is_reported(site):
    source = ("from spade_core.hookspecs import hookimpl\n"
              "@hookimpl\ndef register_trainers(register):\n    raise ValueError('bad')\n")
    make_dist(site, "spade-raises", "1.0", {"spade_raises": source}, {"raises": "spade_raises"})
    row = [r for r in plugins_json({"PYTHONPATH": str(site)}) if r["name"] == "raises"][0]
    assert "register_trainers raised ValueError: bad" in row["error"]


def test_duplicate_component_names_both_distributions(site):
    make_dist(site, "spade-half", "1.0", {"spade_half": GOOD_ESTIMATOR}, {"half": "spade_half"})
    make_dist(site, "spade-half-fork", "2.0", {"spade_half_fork": GOOD_ESTIMATOR},
              {"halffork": "spade_half_fork"})
    rows = [r for r in plugins_json({"PYTHONPATH": str(site)}) if r["name"] == "half"]
    assert len(rows) == 2
    for row in rows:
        assert "spade-half" in row["error"] and "spade-half-fork" in row["error"]


def test_spade_plugins_env_limits_loading(site):
    make_dist(site, "spade-half", "1.0", {"spade_half": GOOD_ESTIMATOR}, {"half": "spade_half"})
    env = {"PYTHONPATH": str(site), "SPADE_PLUGINS": "spade-half"}
    rows = plugins_json(env)
    assert {r["name"] for r in rows} == {"half"}
    env["SPADE_PLUGINS"] = ""
    assert plugins_json(env) == []
    result = run_spade("plugins", env=env)
    assert result.returncode == 0 and "no plugins loaded" in result.stdout


def test_hook_register_corpus_samplers():
    loaded = load_test_plugins(FakeAllKinds())
    assert "fake-corpus" in loaded.registry.names("corpus_sampler")


def test_hook_register_prompt_strategies():
    assert "fake-designer" in load_test_plugins(FakeAllKinds()).registry.names("prompt_strategy")


def test_hook_register_env_families():
    names = load_test_plugins(FakeAllKinds()).registry.names("env_family")
    assert names == ["fake-family", "fake-family-2"]


def test_hook_register_sandboxes():
    assert "fake-sandbox" in load_test_plugins(FakeAllKinds()).registry.names("sandbox")


def test_hook_register_difficulty_estimators():
    import plugins.difficulty_estimators as builtin

    loaded = load_test_plugins(builtin)
    for name in ("regret", "blend", "learnability", "solve-rate", "learning-progress",
                 "learning-progress-per-step", "frontier"):
        check_component(loaded, "difficulty_estimator", name)


def test_hook_register_env_memories():
    assert "fake-memory" in load_test_plugins(FakeAllKinds()).registry.names("env_memory")


def test_hook_register_generation_backends():
    names = load_test_plugins(FakeAllKinds()).registry.names("generation_backend")
    assert names == ["fake-backend"]


def test_hook_register_trainers():
    assert "fake-trainer" in load_test_plugins(FakeAllKinds()).registry.names("trainer")


def test_every_kind_has_a_registration_hook():
    loaded = load_test_plugins(FakeAllKinds())
    for kind in KINDS:
        assert loaded.registry.names(kind.kind), kind
