"""Built-in generation backends: ``transformers`` (CPU or GPU, in process), ``openai`` (any
OpenAI-compatible HTTP endpoint) and ``vllm`` (GPU). Registered from :mod:`plugins.backends.plugin`.

Importing this package is light: torch, transformers and vllm are imported inside the functions that
need them.
"""
