"""Held-out evaluation suites: the built-in eval suites (``reasoning-gym``, ``bfcl``,
``programs``) that the core's ``spade eval`` (:mod:`spade_core.eval`) plays, and the benchmarks
built on them. See ``docs/eval.md``."""
