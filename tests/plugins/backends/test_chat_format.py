"""The chat formatter: a tool-aware template for models whose own template drops tools (rendered
as a prefix-preserving continuation over several turns), and TRL's templates by name."""

from __future__ import annotations

import pytest
from fakes.bundled_model import bundled_model

from spade_core.errors import ConfigError


ADD_TOOL = {"type": "function", "function": {
    "name": "add_numbers", "description": "Add two integers.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                    "b": {"type": "integer"}},
                   "required": ["a", "b"]}}}


def test_tools_use_a_tool_aware_template(backend):
    """SmolLM2's own template drops tools; the ChatML tools template renders them."""
    conv = [{"role": "user", "content": "Add 2 and 3."}]
    plain = backend.tokenizer.decode(backend.formatter.encode(conv))
    assert "add_numbers" not in plain
    [g] = backend.generate([conv], max_new_tokens=8, temperature=0.0, tools=[ADD_TOOL])
    prompt = backend.tokenizer.decode(g.prompt_ids)
    assert '"name": "add_numbers"' in prompt and "<tool_call>" in prompt
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")
    # a multi-turn tool exchange renders as a prefix-preserving continuation
    follow = conv + [
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "add_numbers",
                                              "arguments": {"a": 2, "b": 3}}}]},
        {"role": "tool", "content": "5"}]
    longer = backend.formatter.render(follow, [ADD_TOOL])
    assert longer.startswith(prompt.removesuffix("<|im_start|>assistant\n"))
    assert '<tool_call>\n{"name": "add_numbers", "arguments": {"a": 2, "b": 3}}\n</tool_call>' in longer
    assert "<tool_response>\n5\n</tool_response>" in longer


def test_trl_template_can_be_chosen_for_tools():
    from transformers import AutoTokenizer

    from plugins.backends.chat_format import ChatFormatter

    tokenizer = AutoTokenizer.from_pretrained(bundled_model().path)
    formatter = ChatFormatter(tokenizer, tool_chat_template="trl:qwen2_5")
    text = formatter.render([{"role": "user", "content": "hi"}], [ADD_TOOL])
    assert "<tools>" in text and "add_numbers" in text
    with pytest.raises(ConfigError, match="trl ships no chat template 'nope'"):
        ChatFormatter(tokenizer, tool_chat_template="trl:nope").tool_template()
    with pytest.raises(ConfigError, match="not builtin:NAME"):
        ChatFormatter(tokenizer, chat_template="no-such-template.jinja")
