"""docs/backends.md documents every option of every built-in backend, with its default."""

from __future__ import annotations

import json
import re

import pytest
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
