"""The exports plugin: its formats registered through the hook (the verifiers format with its
options model), and the plugin light at import."""

from __future__ import annotations


from fakes.commands import loaded_by


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


def test_the_verifiers_format_is_registered_with_its_options_model():
    import plugins.exports.plugin as exports_plugin
    from plugins.exports.options import VerifiersOptions
    from spade_core.testing import load_test_plugins

    registry = load_test_plugins(exports_plugin).registry
    assert registry.resolve("export_format", "verifiers", "test").options is VerifiersOptions
    assert registry.resolve("export_format", "jsonl", "test").options is None
    built = registry.build("export_format", "verifiers", {"name": "my_envs"}, "test")
    assert built.name == "my_envs"


def test_importing_the_plugin_imports_no_format_and_no_heavy_package():
    assert loaded_by("plugins.exports.plugin", (
        "torch", "transformers", "datasets", "mcp", "verifiers", "openenv",
        "plugins.exports.formats", "plugins.exports.mcp_server")) == []
