"""spade_core/interfaces: the base classes' working defaults."""

from __future__ import annotations

from spade_core.interfaces import GenerationBackend


def test_a_backend_batch_size_defaults_to_none():
    class Echo(GenerationBackend):
        def generate(self, conversations, *, max_new_tokens, temperature, seed=None,  # noqa
                     tools=None, top_p=None, top_k=None, chat_template_kwargs=None):
            return []

    assert Echo().batch_size is None
