"""Fixtures of the trainer tests: the bundled model's tokenizer (no weights) and a conversation
encoder on it, loaded once for the folder (session-scoped, visible in this folder only: a
pytest-xdist worker goes back and forth between folders, and would load a package-scoped one again
each time it comes back)."""

from __future__ import annotations

import pytest

from plugins.trainers.grpo_rows import ConversationEncoder


@pytest.fixture(scope="session")
def tokenizer():
    from transformers import AutoTokenizer

    from plugins.backends.model_source import resolve_model

    return AutoTokenizer.from_pretrained(resolve_model("bundled:smollm2-135m").path)


@pytest.fixture(scope="session")
def encoder(tokenizer):
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    return ConversationEncoder(
        lambda messages, gen: tokenizer.apply_chat_template(messages, tokenize=False,
                                                            add_generation_prompt=gen),
        lambda text: tokenizer(text, add_special_tokens=False)["input_ids"], [end])
