"""spade-rl core: hook specs, plugin manager, config, loop and CLI.

This package must stay light: it never imports torch, transformers, trl, vllm, faiss or
RestrictedPython at module level. Those live behind hooks in ``plugins/``, ``sandbox/`` and
``envmemory/``.
"""

__version__ = "0.1.0"

#: The Python API (``spade_core/api.py``, docs/api.md), imported on first use so that
#: ``import spade_core`` stays light.
_API = ("check", "evaluate", "load_config", "load_plugins", "open_env", "run")
__all__ = ["__version__", *_API]


def __getattr__(name: str):  # noqa: ANN202 - PEP 562 module attribute
    if name in _API:
        from spade_core import api

        return vars(api)[name]
    raise AttributeError(f"module 'spade_core' has no attribute {name!r}")

