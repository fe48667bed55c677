"""spade-rl core: hook specs, plugin manager, config, loop and CLI.

This package must stay light: it never imports torch, transformers, trl, vllm, faiss or
RestrictedPython at module level. Those live behind hooks in ``plugins/``, ``sandbox/`` and
``envmemory/``.
"""

__version__ = "0.1.0"
