"""The backends plugin: each backend built from its options and the run's model, errors named
with the component, the preflight of the server options, and a light import."""

from __future__ import annotations


import pytest
from fakes.backend_conversations import CONVERSATIONS
from fakes.bundled_model import bundled_model
from fakes.commands import loaded_by

from plugins.backends import options as backend_options
from plugins.backends import plugin as backends_plugin
from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.testing import check_component, load_test_plugins


def test_plugin_builds_from_the_run_model():
    """Options ``model: null`` use BuildContext.model (the run's model.path)."""
    loaded = load_test_plugins(backends_plugin)
    backend = check_component(loaded, "generation_backend", "transformers",
                              context=BuildContext(model=str(bundled_model().path)))
    assert backend.model_dir == bundled_model().path
    [g] = backend.generate(CONVERSATIONS[:1], max_new_tokens=3, temperature=0.0)
    assert g.completion_ids
    backend.close()


def test_plugin_reports_a_bad_model_with_the_component_name():
    loaded = load_test_plugins(backends_plugin)
    component = loaded.registry.components[("generation_backend", "transformers")]
    options = backend_options.TransformersOptions(model="/nonexistent/model-dir")
    with pytest.raises(ConfigError, match="generation backend 'transformers'.*nonexistent"):
        component.build(options, BuildContext())
    with pytest.raises(Exception, match="extra"):
        backend_options.TransformersOptions(modle="typo")


def test_registration_module_is_light():
    assert loaded_by("plugins.backends.plugin", ("torch", "transformers", "vllm", "trl")) == []


def test_server_options_need_exactly_one_of_url_and_launch():
    from types import SimpleNamespace

    context = SimpleNamespace(where="backend.options", model="bundled:smollm2-135m")
    check = backends_plugin.preflight_vllm_server
    assert any("exactly one of url" in p for p in check(backend_options.VLLMServerOptions(), context))
    both = backend_options.VLLMServerOptions(url="http://x", launch=True)
    assert any("exactly one of url" in p for p in check(both, context))
    good = backend_options.VLLMServerOptions(url="http://x")
    assert check(good, context) == []
    missing_dir = backend_options.VLLMServerOptions(url="http://x", weights_dir="/no/such/dir")
    assert any("weights_dir" in p for p in check(missing_dir, context))


def test_every_backend_is_registered_with_its_options_and_preflight_and_bench_as_a_command():
    from spade_core.cli import load_commands

    loaded = load_test_plugins(backends_plugin)
    expected = {"transformers": (backend_options.TransformersOptions,
                                 backends_plugin.preflight_transformers),
                "openai": (backend_options.OpenAIOptions, backends_plugin.preflight_openai),
                "vllm": (backend_options.VLLMOptions, backends_plugin.preflight_vllm),
                "vllm-server": (backend_options.VLLMServerOptions,
                                backends_plugin.preflight_vllm_server)}
    for name, (options, preflight) in expected.items():
        component = loaded.registry.components[("generation_backend", name)]
        assert (component.options, component.preflight) == (options, preflight)
    commands = load_commands(loaded)
    assert commands.commands["bench generation"].plugin == "plugins.backends.plugin"
