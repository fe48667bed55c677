"""spade_core/config/load.py: strict schema errors with their keys, plugin options, overrides."""

from __future__ import annotations

import copy

import pytest
import yaml

from spade_core.config.load import apply_overrides, load_config, resolve_config
from spade_core.errors import ConfigError
from spade_core.testing import load_test_plugins

from fakes.all_kinds import FAKE_CONFIG, FakeAllKinds


@pytest.fixture
def registry():
    return load_test_plugins(FakeAllKinds()).registry


def resolve(data, registry):
    return resolve_config(copy.deepcopy(data), registry, "test.yaml")


def test_valid_config_resolves_with_defaults(registry):
    resolved = resolve(FAKE_CONFIG, registry)
    data = resolved.to_dict()
    assert data["corpus"] == {"plugin": "fake-corpus", "options": {"size": 2, "label": "x"}}
    assert data["designer"]["options"] == {"size": 3, "label": "x"}
    assert data["trainer"]["plugin"] == "none"
    assert data["loop"]["rollouts_per_env"] >= 1
    assert str(resolved.run_dir()) == "runs/t"


def test_unknown_top_level_key_names_key_and_allowed(registry):
    data = dict(FAKE_CONFIG, estimatr="fake-estimator")
    with pytest.raises(ConfigError) as err:
        resolve(data, registry)
    msg = str(err.value)
    assert "estimatr: unknown key" in msg and "estimator" in msg


def test_unknown_nested_key(registry):
    data = dict(FAKE_CONFIG, run={"name": "t", "seeds": 3})
    with pytest.raises(ConfigError, match=r"run\.seeds: unknown key; allowed keys: .*seed"):
        resolve(data, registry)


def test_unknown_plugin_lists_installed_and_suggests(registry):
    data = dict(FAKE_CONFIG, estimator="fake-estimatr")
    with pytest.raises(ConfigError) as err:
        resolve(data, registry)
    msg = str(err.value)
    assert "estimator.plugin: unknown difficulty estimator 'fake-estimatr'" in msg
    assert "Installed: fake-estimator" in msg and "Did you mean 'fake-estimator'?" in msg


def test_plugin_options_validated_by_plugin_schema(registry):
    data = dict(FAKE_CONFIG, corpus={"plugin": "fake-corpus", "options": {"size": 0}})
    with pytest.raises(ConfigError, match=r"corpus\.options\.size: .*greater than or equal to 1"
                                          r".*got 0"):
        resolve(data, registry)
    data = dict(FAKE_CONFIG, corpus={"plugin": "fake-corpus", "options": {"colour": 1}})
    with pytest.raises(ConfigError, match=r"corpus\.options\.colour: unknown option for "
                                          r"'fake-corpus'; allowed: label, size"):
        resolve(data, registry)


def test_options_for_plugin_without_schema_refused(registry):
    data = dict(FAKE_CONFIG, families=[{"plugin": "fake-family", "options": {"a": 1}}])
    with pytest.raises(ConfigError, match="takes no options"):
        resolve(data, registry)


def test_all_problems_reported_together(registry):
    data = dict(FAKE_CONFIG, sandbox="nope", memory="nada")
    with pytest.raises(ConfigError) as err:
        resolve(data, registry)
    assert "2 problems" in str(err.value)
    assert "sandbox.plugin" in str(err.value) and "memory.plugin" in str(err.value)


def test_a_core_section_error_does_not_hide_plugin_option_errors(registry):
    data = dict(FAKE_CONFIG, run={"name": "t", "seeds": 3},
                corpus={"plugin": "fake-corpus", "options": {"size": 0}},
                families=[{"plugin": "fake-family", "options": {"a": 1}}])
    with pytest.raises(ConfigError) as err:
        resolve(data, registry)
    msg = str(err.value)
    assert "3 problems" in msg and "run.seeds: unknown key" in msg
    assert "corpus.options.size: Input should be greater than or equal to 1" in msg
    assert "families.0.options: 'fake-family' takes no options" in msg


def test_an_unknown_option_does_not_hide_the_other_options_errors(registry):
    data = dict(FAKE_CONFIG, corpus={"plugin": "fake-corpus",
                                     "options": {"colour": 1, "size": 0}})
    with pytest.raises(ConfigError) as err:
        resolve(data, registry)
    msg = str(err.value)
    assert "2 problems" in msg and "corpus.options.colour: unknown option" in msg
    assert "corpus.options.size: Input should be greater than or equal to 1" in msg


def test_missing_section_named(registry):
    data = {k: v for k, v in FAKE_CONFIG.items() if k != "backend"}
    with pytest.raises(ConfigError, match="backend: required key is missing"):
        resolve(data, registry)


def test_duplicate_family_refused(registry):
    data = dict(FAKE_CONFIG, families=["fake-family", "fake-family"])
    with pytest.raises(ConfigError, match="selected more than once"):
        resolve(data, registry)


def test_bad_run_dir_placeholder(registry):
    data = dict(FAKE_CONFIG, run={"dir": "runs/{nme}"})
    with pytest.raises(ConfigError, match=r"run\.dir.*placeholder"):
        resolve(data, registry)


def test_overrides_parse_yaml_scalars():
    data = {"run": {"seed": 1}, "families": [{"plugin": "a"}]}
    apply_overrides(data, ["run.seed=7", "run.name=abc", "loop.max_turns=3",
                           "families.0.plugin=b"], "t")
    assert data["run"] == {"seed": 7, "name": "abc"}
    assert data["loop"] == {"max_turns": 3}
    assert data["families"][0]["plugin"] == "b"
    with pytest.raises(ConfigError, match="expected KEY.PATH=VALUE"):
        apply_overrides(data, ["novalue"], "t")
    with pytest.raises(ConfigError, match="not a mapping"):
        apply_overrides(data, ["run.seed.x=1"], "t")


def test_load_config_file_with_set(tmp_path, registry):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(FAKE_CONFIG))
    resolved = load_config(path, registry, ["run.seed=5", "estimator.options.size=9"])
    assert resolved.config.run.seed == 5
    assert resolved.components["estimator"].options.size == 9


def test_selecting_another_plugin_drops_the_previous_plugins_options(tmp_path, registry):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(dict(FAKE_CONFIG, estimator={
        "plugin": "fake-estimator", "options": {"size": 9}})))
    # fake-sandbox takes the same options model, so keeping size=9 would have been accepted:
    # only dropping it gives the default
    data = yaml.safe_load(path.read_text())
    apply_overrides(data, ["estimator.plugin=other"], "t")
    assert data["estimator"] == {"plugin": "other"}
    # options set by the same overrides, before or after, apply to the new plugin
    for order in (["estimator.plugin=other", "estimator.options.label=y"],
                  ["estimator.options.label=y", "estimator.plugin=other"]):
        data = yaml.safe_load(path.read_text())
        apply_overrides(data, order, "t")
        assert data["estimator"] == {"plugin": "other", "options": {"label": "y"}}
    # naming the same plugin again keeps its options
    resolved = load_config(path, registry, ["estimator.plugin=fake-estimator"])
    assert resolved.components["estimator"].options.size == 9
    data = {"families": [{"plugin": "a", "options": {"x": 1}}], "hints": {"backend": "b"}}
    apply_overrides(data, ["families.0.plugin=c", "hints.backend.plugin=d"], "t")
    assert data["families"] == [{"plugin": "c"}] and data["hints"]["backend"] == {"plugin": "d"}
