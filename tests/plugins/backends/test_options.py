"""Options of the built-in backends: unknown keys and values out of range refused with the option
named, and docs/backends.md documenting every option of every backend, with its default."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError
from fakes.cli import ROOT

from plugins.backends import options as backend_options

DOC = (ROOT / "docs" / "backends.md").read_text()
MODELS = {"transformers": backend_options.TransformersOptions,
          "openai": backend_options.OpenAIOptions, "vllm": backend_options.VLLMOptions,
          "vllm-server": backend_options.VLLMServerOptions}


def _section(name: str) -> str:
    match = re.search(rf"^## `{name}`\n(.*?)(?=^## )", DOC, re.S | re.M)
    assert match, f"docs/backends.md has no '## `{name}`' section"
    return match.group(1)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_option_is_documented_with_its_default(name):
    section = _section(name)
    for field, info in MODELS[name].model_fields.items():
        assert f"`{field}`" in section, f"option {field!r} of {name} is not in docs/backends.md"
        default = info.get_default(call_default_factory=True)
        shown = {None: "null", True: "true", False: "false"}.get(default, None) \
            if isinstance(default, (bool, type(None))) else json.dumps(default).strip('"')
        if isinstance(default, float):
            shown = f"{default:g}"
        row = next((line for line in section.splitlines() if line.startswith(f"| `{field}` |")), "")
        if row:  # options documented as a group ("as for transformers") have no own row
            assert f"`{shown}`" in row, f"{name}.{field}: default {shown} not in {row!r}"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_unknown_keys_are_refused(name):
    with pytest.raises(ValidationError, match="extra"):
        MODELS[name].model_validate({"no_such_option": 1})


def test_values_out_of_range_are_refused_with_the_option_named():
    with pytest.raises(ValidationError, match="top_p"):
        backend_options.TransformersOptions(top_p=0.0)
    with pytest.raises(ValidationError, match="batch_size"):
        backend_options.TransformersOptions(batch_size=0)
    with pytest.raises(ValidationError, match="dtype"):
        backend_options.TransformersOptions(dtype="float64")
    with pytest.raises(ValidationError, match="gpu_memory_utilization"):
        backend_options.VLLMOptions(gpu_memory_utilization=1.5)
    with pytest.raises(ValidationError, match="port"):
        backend_options.VLLMServerOptions(port=70000)
    with pytest.raises(ValidationError, match="max_retries"):
        backend_options.OpenAIOptions(max_retries=-1)


def test_the_local_backends_share_the_model_options_and_their_defaults():
    for model in (backend_options.TransformersOptions, backend_options.VLLMOptions,
                  backend_options.VLLMServerOptions):
        options = model()
        assert options.model is None and options.chat_template is None
        assert options.tool_chat_template == "auto" and options.chat_template_kwargs == {}
        assert (options.top_p, options.top_k) == (1.0, 0)
    server = backend_options.VLLMServerOptions()
    assert (server.url, server.launch, server.weights_dir) == (None, False, "/dev/shm")
