"""Hand-written seed environment programs, one file per environment, grouped by family folder.

They are program sources, read as text and run in the sandbox (never imported: tool-use seeds use
the injected ``ToolUseBaseEnv``). Each is deterministic for a seed, solved by its own
``solution()`` and not solved by junk actions; ``tests/plugins/families/test_seeds.py`` checks all three.
"""
